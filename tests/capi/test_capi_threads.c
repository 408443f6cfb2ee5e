/* The C API from several threads:
 *  - eight trainers training at once (each its own seed and output folder; dropout and
 *    checkpointing on) end bitwise as each ends alone, with the same activation peaks, and
 *    their per-thread errors never mix;
 *  - tft_trainer_cancel called from another thread while training runs;
 *  - tft_trainer_cancel racing tft_trainer_free: cancelled or a dead handle, never a touch of
 *    freed memory (the sanitizer leg and valgrind watch this one).
 * Plain C99 + POSIX threads. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>

#include "capi/capi_test_support.h"

enum { kThreads = 8 };

struct worker {
  int index;
  char config_path[4096]; /* tiny.yaml, found by the main thread (cmocka's asserts are not
                             for worker threads) */
  char output_dir[300];
  tft_status train_status;
  struct run_result result;
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
  tft_train_report* report = NULL;
  char key[64];
  snprintf(key, sizeof key, "training.no_such_key_%d", w->index);
  w->errors_kept_apart = 1;
  if (tft_config_create_from_file(w->config_path, &config) != TFT_OK) {
    snprintf(w->message, sizeof w->message, "load: %s", tft_last_error());
    w->train_status = TFT_ERROR_INTERNAL;
    return NULL;
  }
  {
    char quoted[320], seed[32];
    snprintf(quoted, sizeof quoted, "\"%s\"", w->output_dir);
    tft_config_set_value(config, "output.directory", quoted);
    snprintf(seed, sizeof seed, "%d", 100 + w->index);
    tft_config_set_value(config, "training.seed", seed);
  }
  if (tft_config_set_value(config, key, "1") != TFT_ERROR_CONFIG ||
      !own_error_is_visible(w->index)) {
    w->errors_kept_apart = 0;
  }
  if (tft_trainer_create(config, &trainer) != TFT_OK) {
    snprintf(w->message, sizeof w->message, "create: %s", tft_last_error());
    w->train_status = TFT_ERROR_INTERNAL;
    tft_config_free(config);
    return NULL;
  }
  w->train_status = tft_trainer_train(trainer, &report);
  if (w->train_status == TFT_OK) w->train_status = read_report(report, &w->result);
  if (w->train_status != TFT_OK) snprintf(w->message, sizeof w->message, "%s", tft_last_error());
  tft_train_report_free(report);
  /* The error made before training is still this thread's last one. */
  if (w->train_status == TFT_OK && !own_error_is_visible(w->index)) w->errors_kept_apart = 0;
  if (tft_config_set_value(config, key, "1") != TFT_ERROR_CONFIG ||
      !own_error_is_visible(w->index)) {
    w->errors_kept_apart = 0;
  }
  tft_trainer_free(trainer);
  tft_config_free(config);
  return NULL;
}

static void start_workers(struct worker* workers, const char* dir, const char* name,
                          int concurrently) {
  pthread_t threads[kThreads];
  int i;
  for (i = 0; i < kThreads; ++i) {
    memset(&workers[i], 0, sizeof workers[i]);
    workers[i].index = i;
    tiny_config_path(workers[i].config_path, sizeof workers[i].config_path);
    snprintf(workers[i].output_dir, sizeof workers[i].output_dir, "%s/%s%d", dir, name, i);
    if (concurrently) {
      assert_int_equal(pthread_create(&threads[i], NULL, train_one, &workers[i]), 0);
    } else {
      train_one(&workers[i]);
    }
  }
  if (concurrently) {
    for (i = 0; i < kThreads; ++i) assert_int_equal(pthread_join(threads[i], NULL), 0);
  }
  for (i = 0; i < kThreads; ++i) {
    if (workers[i].train_status != TFT_OK) {
      fail_msg("%s %d: %s: %s", name, i, tft_status_name(workers[i].train_status),
               workers[i].message);
    }
    assert_true(isfinite(workers[i].result.summary.final_validation_loss));
    assert_true(workers[i].errors_kept_apart);
  }
}

/* Bitwise: the same bits of every loss and metric, the same activation peaks. */
static void assert_same_run(const struct run_result* alone_run,
                            const struct run_result* together_run, int index) {
  const tft_train_summary* alone = &alone_run->summary;
  const tft_train_summary* together = &together_run->summary;
  const double alone_losses[] = {alone->final_train_loss,     alone->final_validation_loss,
                                 alone->best_validation_loss, alone->initial_validation_loss,
                                 alone_run->validation.loss,  alone_run->validation.mae_p50};
  const double together_losses[] = {
      together->final_train_loss,     together->final_validation_loss,
      together->best_validation_loss, together->initial_validation_loss,
      together_run->validation.loss,  together_run->validation.mae_p50};
  if (memcmp(alone_losses, together_losses, sizeof alone_losses) != 0) {
    fail_msg("trainer %d: final train loss %.17g alone, %.17g together; validation %.17g, %.17g",
             index, alone->final_train_loss, together->final_train_loss,
             alone->final_validation_loss, together->final_validation_loss);
  }
  assert_int_equal(alone->epochs_run, together->epochs_run);
  assert_int_equal(alone->peak_activation_bytes, together->peak_activation_bytes);
  assert_int_equal(alone_run->memory.checkpointed_peak_bytes,
                   together_run->memory.checkpointed_peak_bytes);
  assert_int_equal(alone_run->memory.unchecked_peak_bytes,
                   together_run->memory.unchecked_peak_bytes);
}

static void eight_trainers_at_once_end_as_each_ends_alone(void** state) {
  struct worker alone[kThreads], together[kThreads];
  char dir[256];
  int i;
  (void)state;
  make_scratch_dir(dir, "threads");
  start_workers(alone, dir, "alone", 0);
  start_workers(together, dir, "together", 1);
  for (i = 0; i < kThreads; ++i) {
    assert_true(alone[i].result.summary.peak_activation_bytes > 0);
    assert_same_run(&alone[i].result, &together[i].result, i);
  }
  /* The seeds matter: otherwise "the same as alone" would prove nothing. */
  assert_true(alone[0].result.summary.final_train_loss != alone[1].result.summary.final_train_loss);
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
  ASSERT_OK(tft_config_set_value(config, "training.epochs", "50")); /* far longer than the test */
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

/* ------------------------------------------------------------------ cancel racing free */

struct cancel_race {
  tft_trainer* trainer; /* only its address is used once freed */
  pthread_mutex_t mutex;
  int cancels;      /* successful cancels before the free */
  int saw_dead;     /* the canceller got INVALID_ARGUMENT */
  tft_status wrong; /* any other status */
};

static void* cancel_until_dead(void* arg) {
  struct cancel_race* race = arg;
  for (;;) {
    const tft_status status = tft_trainer_cancel(race->trainer);
    pthread_mutex_lock(&race->mutex);
    if (status == TFT_OK) {
      ++race->cancels;
    } else {
      if (status == TFT_ERROR_INVALID_ARGUMENT)
        race->saw_dead = 1;
      else
        race->wrong = status;
      pthread_mutex_unlock(&race->mutex);
      return NULL;
    }
    pthread_mutex_unlock(&race->mutex);
  }
}

static void cancel_racing_free_is_safe(void** state) {
  struct cancel_race race;
  tft_config* config;
  pthread_t thread;
  char dir[256];
  int started = 0;
  (void)state;
  make_scratch_dir(dir, "cancel_race");
  memset(&race, 0, sizeof race);
  pthread_mutex_init(&race.mutex, NULL);
  config = load_tiny_config(dir);
  ASSERT_OK(tft_trainer_create(config, &race.trainer));
  assert_int_equal(pthread_create(&thread, NULL, cancel_until_dead, &race), 0);
  while (!started) { /* free only once cancels are flowing */
    pthread_mutex_lock(&race.mutex);
    started = race.cancels > 0;
    pthread_mutex_unlock(&race.mutex);
  }
  tft_trainer_free(race.trainer);
  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_true(race.saw_dead);
  assert_int_equal(race.wrong, TFT_OK);
  tft_config_free(config);
  pthread_mutex_destroy(&race.mutex);
  remove_tree(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(eight_trainers_at_once_end_as_each_ends_alone),
      cmocka_unit_test(cancel_from_another_thread),
      cmocka_unit_test(cancel_racing_free_is_safe),
  };
  return cmocka_run_group_tests_name("capi_threads", tests, NULL, NULL);
}
