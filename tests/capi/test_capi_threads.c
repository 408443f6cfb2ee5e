/* The C API from several threads: four trainers training at once (each its own config, data
 * and output folder) with per-thread errors that never mix, and tft_trainer_cancel called
 * from another thread while training runs. Plain C99 + POSIX threads. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>

#include "capi/capi_test_support.h"

enum { kThreads = 4 };

struct worker {
  int index;
  char output_dir[300];
  tft_status train_status;
  double final_validation_loss;
  int errors_kept_apart; /* 1 when this thread's own errors were what it read back */
  char message[512];
};

/* Each thread sets the unknown key training.no_such_key_<index>; the message names it. */
static int own_error_is_visible(int index) {
  char key[64];
  snprintf(key, sizeof key, "no_such_key_%d'", index);
  return strstr(tft_last_error(), key) != NULL;
}

/* Makes an error of its own before and after training (other threads fail with other keys
 * meanwhile) and checks it reads back its own message each time. */
static void* train_one(void* arg) {
  struct worker* w = arg;
  tft_config* config = NULL;
  tft_trainer* trainer = NULL;
  tft_train_report report;
  char key[64];
  snprintf(key, sizeof key, "training.no_such_key_%d", w->index);
  w->errors_kept_apart = 1;
  if (tft_config_load_file(TFT_EXAMPLES_DIR "/configs/tiny.yaml", &config) != TFT_OK) {
    snprintf(w->message, sizeof w->message, "load: %s", tft_last_error());
    w->train_status = TFT_ERROR_INTERNAL;
    return NULL;
  }
  {
    char quoted[320];
    snprintf(quoted, sizeof quoted, "\"%s\"", w->output_dir);
    tft_config_set(config, "output.directory", quoted);
  }
  if (tft_config_set(config, key, "1") != TFT_ERROR_CONFIG || !own_error_is_visible(w->index)) {
    w->errors_kept_apart = 0;
  }
  if (tft_trainer_create(config, &trainer) != TFT_OK) {
    snprintf(w->message, sizeof w->message, "create: %s", tft_last_error());
    w->train_status = TFT_ERROR_INTERNAL;
    tft_config_free(config);
    return NULL;
  }
  memset(&report, 0, sizeof report);
  report.struct_size = sizeof report;
  w->train_status = tft_trainer_train(trainer, &report);
  if (w->train_status != TFT_OK) snprintf(w->message, sizeof w->message, "%s", tft_last_error());
  w->final_validation_loss = report.final_validation_loss;
  /* The error made before training is still this thread's last one. */
  if (w->train_status == TFT_OK && !own_error_is_visible(w->index)) w->errors_kept_apart = 0;
  if (tft_config_set(config, key, "1") != TFT_ERROR_CONFIG || !own_error_is_visible(w->index)) {
    w->errors_kept_apart = 0;
  }
  tft_trainer_free(trainer);
  tft_config_free(config);
  return NULL;
}

static void four_trainers_train_concurrently(void** state) {
  pthread_t threads[kThreads];
  struct worker workers[kThreads];
  char dir[256];
  int i;
  (void)state;
  make_scratch_dir(dir, "threads");
  for (i = 0; i < kThreads; ++i) {
    memset(&workers[i], 0, sizeof workers[i]);
    workers[i].index = i;
    snprintf(workers[i].output_dir, sizeof workers[i].output_dir, "%s/run%d", dir, i);
    assert_int_equal(pthread_create(&threads[i], NULL, train_one, &workers[i]), 0);
  }
  for (i = 0; i < kThreads; ++i) assert_int_equal(pthread_join(threads[i], NULL), 0);
  for (i = 0; i < kThreads; ++i) {
    if (workers[i].train_status != TFT_OK) {
      fail_msg("thread %d: %s: %s", i, tft_status_name(workers[i].train_status),
               workers[i].message);
    }
    assert_true(isfinite(workers[i].final_validation_loss));
    assert_true(workers[i].errors_kept_apart);
  }
  remove_tree(dir);
}

/* ------------------------------------------------------------------ cancel from a thread */

struct cancel_run {
  tft_trainer* trainer;
  pthread_mutex_t mutex;
  pthread_cond_t started;
  int steps;
  tft_status status;
};

static int signal_steps(const tft_progress* p, void* user) {
  struct cancel_run* run = user;
  if (p->kind == TFT_PROGRESS_STEP) {
    pthread_mutex_lock(&run->mutex);
    ++run->steps;
    pthread_cond_signal(&run->started);
    pthread_mutex_unlock(&run->mutex);
  }
  return 0;
}

static void* run_training(void* arg) {
  struct cancel_run* run = arg;
  run->status = tft_trainer_train(run->trainer, NULL);
  return NULL;
}

static void cancel_from_another_thread(void** state) {
  struct cancel_run run;
  tft_config* config;
  pthread_t thread;
  char dir[256];
  (void)state;
  make_scratch_dir(dir, "cancel_thread");
  memset(&run, 0, sizeof run);
  pthread_mutex_init(&run.mutex, NULL);
  pthread_cond_init(&run.started, NULL);
  config = load_tiny_config(dir);
  ASSERT_OK(tft_config_set(config, "training.epochs", "50")); /* far longer than the test */
  ASSERT_OK(tft_trainer_create(config, &run.trainer));
  ASSERT_OK(tft_trainer_set_progress_callback(run.trainer, signal_steps, &run));
  assert_int_equal(pthread_create(&thread, NULL, run_training, &run), 0);

  pthread_mutex_lock(&run.mutex);
  while (run.steps == 0) pthread_cond_wait(&run.started, &run.mutex);
  pthread_mutex_unlock(&run.mutex);
  ASSERT_OK(tft_trainer_cancel(run.trainer)); /* while train runs on the other thread */
  assert_int_equal(pthread_join(thread, NULL), 0);

  assert_int_equal(run.status, TFT_ERROR_CANCELLED);
  assert_true(run.steps < 50 * 3); /* stopped well before the end */
  tft_trainer_free(run.trainer);
  tft_config_free(config);
  pthread_cond_destroy(&run.started);
  pthread_mutex_destroy(&run.mutex);
  remove_tree(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(four_trainers_train_concurrently),
      cmocka_unit_test(cancel_from_another_thread),
  };
  return cmocka_run_group_tests_name("capi_threads", tests, NULL, NULL);
}
