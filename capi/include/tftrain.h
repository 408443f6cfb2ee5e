/*
 * tftrain: train Temporal Fusion Transformers with gradient checkpointing. The C API.
 *
 * C99 and C++; the only header a host needs. Conventions, for every function below:
 *
 *  - Fallible calls return tft_status: TFT_OK (0) or a negative error category. On failure
 *    tft_last_error() holds a UTF-8 message for this thread (not cleared by later successes),
 *    and out-parameters are left untouched.
 *  - Objects are opaque handles made by tft_X_create-style calls and released by tft_X_free,
 *    which accepts NULL. Passing a handle after it was freed is undefined behaviour in C; the
 *    library detects it where it can (TFT_ERROR_INVALID_ARGUMENT, "dead handle").
 *  - Strings passed in are borrowed for the call only. Strings given out are either owned by
 *    the library (the function says until when) or copied into a caller buffer: (buf, len,
 *    needed) writes at most len bytes including the terminating NUL and stores the full size
 *    (including the NUL) in *needed when needed is not NULL. Call it with buf = NULL, len = 0
 *    to ask for the size; a buffer too small gets a truncated, NUL-terminated copy and
 *    TFT_ERROR_BUFFER_TOO_SMALL.
 *  - No C++ exception, abort or crash crosses this boundary for bad input.
 *  - Threads: distinct handles may be used from different threads at once. One handle must not
 *    be used from two threads at once, except where a function says so.
 */
#ifndef TFTRAIN_H
#define TFTRAIN_H

#include <stddef.h>
#include <stdint.h>

#define TFTRAIN_VERSION_MAJOR 0
#define TFTRAIN_VERSION_MINOR 1
#define TFTRAIN_VERSION_PATCH 0
/* Bumped when the C API changes incompatibly (functions removed, semantics changed). */
#define TFT_API_VERSION 1

#if defined(_WIN32) && defined(TFT_BUILDING_LIBRARY)
#define TFT_API __declspec(dllexport)
#elif defined(_WIN32)
#define TFT_API __declspec(dllimport)
#elif defined(__GNUC__)
#define TFT_API __attribute__((visibility("default")))
#else
#define TFT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * Version and errors
 */

typedef enum tft_status {
  TFT_OK = 0,
  TFT_ERROR_INVALID_ARGUMENT = -1, /* NULL where a pointer is required, a dead handle, ... */
  TFT_ERROR_CONFIG = -2,           /* a configuration value, key or file is wrong */
  TFT_ERROR_DATA = -3,             /* input data is wrong (missing column, bad value, ...) */
  TFT_ERROR_IO = -4,               /* a file could not be read or written */
  TFT_ERROR_NUMERICAL = -5,        /* NaN or infinity in training */
  TFT_ERROR_CANCELLED = -6,        /* the progress callback or tft_trainer_cancel stopped it */
  TFT_ERROR_UNSUPPORTED = -7,      /* not available in this build (e.g. CUDA) */
  TFT_ERROR_INTERNAL = -8,         /* a bug or an unexpected failure inside the library */
  TFT_ERROR_BUFFER_TOO_SMALL = -9, /* a caller buffer was too small; see *needed */
  TFT_ERROR_OUT_OF_MEMORY = -10    /* an allocation failed */
} tft_status;

/* The library's version as "MAJOR.MINOR.PATCH"; a static string. */
TFT_API const char* tft_version_string(void);

/* The library's version numbers at run time; any pointer may be NULL. */
TFT_API void tft_version(int* major, int* minor, int* patch);

/* The message of the last failed call on this thread ("" if none failed yet). Owned by the
 * library; valid until the next failing call on this thread. */
TFT_API const char* tft_last_error(void);

/* The enumerator's name without the prefix, e.g. "ERROR_CONFIG"; "UNKNOWN" for other values.
 * A static string. */
TFT_API const char* tft_status_name(tft_status status);

/* ---------------------------------------------------------------------------------------
 * Gradient checkpointing configuration (the seed's CheckpointConfig)
 *
 * Which of the model's units (in forward order: static_encoder, historical_encoder,
 * future_encoder, lstm_encoder, lstm_decoder, attention_0, ...) recompute their activations
 * in backward instead of storing them. The formulas of should_checkpoint, memory_savings and
 * compute_overhead are the seed crate's; the trainer reports measured figures beside them.
 */

typedef struct tft_checkpoint_config tft_checkpoint_config;

typedef enum tft_checkpoint_strategy {
  TFT_CHECKPOINT_NONE = 0,
  TFT_CHECKPOINT_UNIFORM = 1,
  TFT_CHECKPOINT_SELECTIVE = 2,
  TFT_CHECKPOINT_DYNAMIC = 3
} tft_checkpoint_strategy;

/* Constructors. Each stores a new handle in *out (free it with tft_checkpoint_config_free).
 * The strategy constructors set both sub-layer flags and min interval 1; none() clears the
 * flags. Errors: INVALID_ARGUMENT (out NULL, or layers NULL with count > 0), CONFIG (dynamic:
 * num_layers 0 or memory_fraction not a finite number in [0, 1]). uniform(0) is accepted as
 * in the seed (it checkpoints nothing) but fails validate. */
TFT_API tft_status tft_checkpoint_config_uniform(size_t interval, tft_checkpoint_config** out);
TFT_API tft_status tft_checkpoint_config_selective(const size_t* layers, size_t count,
                                                   tft_checkpoint_config** out);
TFT_API tft_status tft_checkpoint_config_dynamic(size_t num_layers, double memory_fraction,
                                                 tft_checkpoint_config** out);
TFT_API tft_status tft_checkpoint_config_none(tft_checkpoint_config** out);

/* A new handle with the same settings. Errors: INVALID_ARGUMENT. */
TFT_API tft_status tft_checkpoint_config_clone(const tft_checkpoint_config* config,
                                               tft_checkpoint_config** out);

/* Releases the handle; NULL is allowed. */
TFT_API void tft_checkpoint_config_free(tft_checkpoint_config* config);

/* Setters (the seed's with_* builders, applied in place). `enabled` is 0 or non-zero.
 * set_min_interval(0) is stored but fails validate. Errors: INVALID_ARGUMENT. */
TFT_API tft_status tft_checkpoint_config_set_checkpoint_attention(tft_checkpoint_config* config,
                                                                  int enabled);
TFT_API tft_status tft_checkpoint_config_set_checkpoint_ffn(tft_checkpoint_config* config,
                                                            int enabled);
TFT_API tft_status tft_checkpoint_config_set_min_interval(tft_checkpoint_config* config,
                                                          size_t interval);

/* Getters. Errors: INVALID_ARGUMENT. */
TFT_API tft_status tft_checkpoint_config_strategy(const tft_checkpoint_config* config,
                                                  tft_checkpoint_strategy* out);
TFT_API tft_status tft_checkpoint_config_checkpoint_attention(const tft_checkpoint_config* config,
                                                              int* out);
TFT_API tft_status tft_checkpoint_config_checkpoint_ffn(const tft_checkpoint_config* config,
                                                        int* out);
TFT_API tft_status tft_checkpoint_config_min_interval(const tft_checkpoint_config* config,
                                                      size_t* out);

/* Queries (the seed's formulas). *out of should_checkpoint is 1 or 0.
 * Errors: INVALID_ARGUMENT. */
TFT_API tft_status tft_checkpoint_config_should_checkpoint(const tft_checkpoint_config* config,
                                                           size_t layer, int* out);
TFT_API tft_status tft_checkpoint_config_memory_savings(const tft_checkpoint_config* config,
                                                        size_t num_layers, double* out);
TFT_API tft_status tft_checkpoint_config_compute_overhead(const tft_checkpoint_config* config,
                                                          size_t num_layers, double* out);

/* TFT_OK when the configuration is valid; CONFIG with the broken rule in tft_last_error()
 * otherwise (uniform interval 0, duplicate selective layers, dynamic out of range,
 * min interval 0). Errors: INVALID_ARGUMENT, CONFIG. */
TFT_API tft_status tft_checkpoint_config_validate(const tft_checkpoint_config* config);

/* The human-readable summary ("Uniform checkpointing every 2 layers"), into a caller
 * buffer (see the conventions above). Errors: INVALID_ARGUMENT, BUFFER_TOO_SMALL. */
TFT_API tft_status tft_checkpoint_config_summary(const tft_checkpoint_config* config, char* buf,
                                                 size_t len, size_t* needed);

/* YAML and JSON text (one schema: docs/config.md, section `checkpoint`), into a caller
 * buffer. Errors: INVALID_ARGUMENT, BUFFER_TOO_SMALL. */
TFT_API tft_status tft_checkpoint_config_to_yaml(const tft_checkpoint_config* config, char* buf,
                                                 size_t len, size_t* needed);
TFT_API tft_status tft_checkpoint_config_to_json(const tft_checkpoint_config* config, char* buf,
                                                 size_t len, size_t* needed);

/* Parses YAML or JSON text (NUL-terminated UTF-8) into a new handle in *out. Unknown keys,
 * wrong types and invalid settings are errors naming the key (and the line, for YAML).
 * Keys without a setter above, such as boundary_dtype (float32, bfloat16 or int8: compressed
 * boundaries, whose gradients are not bitwise those of float32), are set through this text or
 * tft_config_set(config, "checkpoint.boundary_dtype", "int8").
 * Errors: INVALID_ARGUMENT, CONFIG. */
TFT_API tft_status tft_checkpoint_config_from_yaml(const char* yaml, tft_checkpoint_config** out);
TFT_API tft_status tft_checkpoint_config_from_json(const char* json, tft_checkpoint_config** out);

/* ---------------------------------------------------------------------------------------
 * Training configuration (one YAML file; every key in docs/config.md)
 *
 * A tft_config is plain data: loading checks it completely, setters check types only, and
 * tft_config_validate checks every rule again. Relative paths (data.path, output.directory)
 * resolve against the YAML file's folder; text loaded with tft_config_load_string leaves them
 * relative to the process's working directory.
 */

typedef struct tft_config tft_config;

/* Reads and validates a YAML file into a new handle in *out. Errors: INVALID_ARGUMENT, IO (the
 * file cannot be read), CONFIG (the message names the file, line and dotted key, e.g.
 * "sp500.yaml:12: training.epochs: expected a positive integer, got \"ten\""). */
TFT_API tft_status tft_config_load_file(const char* path, tft_config** out);

/* The same from YAML text (NUL-terminated UTF-8). Errors: INVALID_ARGUMENT, CONFIG. */
TFT_API tft_status tft_config_load_string(const char* yaml, tft_config** out);

/* A new handle with the same settings. Errors: INVALID_ARGUMENT. */
TFT_API tft_status tft_config_clone(const tft_config* config, tft_config** out);

/* Releases the handle; NULL is allowed. */
TFT_API void tft_config_free(tft_config* config);

/* The value at a dotted key ("training.epochs", "data.known_reals", "training.lr_schedule",
 * "checkpoint") as YAML text ("20", "[price, promo]", "{kind: none, ...}"), into a caller
 * buffer. Errors: INVALID_ARGUMENT, CONFIG (unknown key), BUFFER_TOO_SMALL. */
TFT_API tft_status tft_config_get(const tft_config* config, const char* key, char* buf,
                                  size_t len, size_t* needed);

/* Sets the value at a dotted key from YAML text ("64", "0.001", "[0.1, 0.5, 0.9]", "null"),
 * with the loader's type rules; the config is unchanged on error. A strategy change needs the
 * whole section: key "checkpoint", value "{strategy: uniform, interval: 2}". Call
 * tft_config_validate when done. Errors: INVALID_ARGUMENT, CONFIG (unknown key, wrong type). */
TFT_API tft_status tft_config_set(tft_config* config, const char* key, const char* value);

/* Replaces the checkpoint section with a copy of `checkpoint` (borrowed for the call).
 * Errors: INVALID_ARGUMENT. */
TFT_API tft_status tft_config_set_checkpoint(tft_config* config,
                                             const tft_checkpoint_config* checkpoint);

/* A new checkpoint-configuration handle holding a copy of the config's checkpoint section.
 * Errors: INVALID_ARGUMENT. */
TFT_API tft_status tft_config_get_checkpoint(const tft_config* config,
                                             tft_checkpoint_config** out);

/* TFT_OK when every rule holds; CONFIG with the first broken rule (its dotted key) in
 * tft_last_error() otherwise. Errors: INVALID_ARGUMENT, CONFIG. */
TFT_API tft_status tft_config_validate(const tft_config* config);

/* The whole configuration as YAML (every key, paths as resolved), into a caller buffer; it
 * loads back to an equal configuration. Errors: INVALID_ARGUMENT, BUFFER_TOO_SMALL. */
TFT_API tft_status tft_config_to_yaml(const tft_config* config, char* buf, size_t len,
                                      size_t* needed);

/* ---------------------------------------------------------------------------------------
 * Results shared by the trainer and a loaded model
 *
 * Structs marked "grows" start with struct_size: set it to sizeof(the struct) before the
 * call (the frozen ones too). The library fills the fields that fit in struct_size and leaves the rest, so a host
 * built against an older header keeps working with a newer library. Figures that do not
 * exist (no validation set, no 0.9 quantile) are NaN.
 */

/* Forecast quality of a set of windows. Frozen: tft_train_report embeds it, so it never grows
 * (new figures will come in a new struct); struct_size is still checked. */
typedef struct tft_metrics {
  size_t struct_size;
  double loss;       /* quantile (pinball) loss on the scaled target, the training objective */
  double q_risk_p50; /* normalised quantile risk at 0.5 in original units (Lim et al. 2021) */
  double q_risk_p90; /* the same at 0.9 */
  double mae_p50;    /* mean absolute error of the median forecast, original units */
  int64_t windows;   /* windows evaluated; 0 when there is no validation set */
} tft_metrics;

/* Forecasts: the validation windows in order, then one window after the data per series.
 * Values are in original units. The handle is independent of whatever produced it. */
typedef struct tft_predictions tft_predictions;

/* One forecast's description (grows). */
typedef struct tft_forecast_info {
  size_t struct_size;
  size_t series;   /* index into the series (tft_predictions_series_name) */
  int64_t origin;  /* time of the last encoder step, as the time column holds it: the integer,
                      or microseconds since 1970-01-01T00:00:00Z for ISO 8601 times */
  int is_future;   /* 1: the window after the data (actuals unknown, NaN) */
} tft_forecast_info;

/* Releases the handle; NULL is allowed. */
TFT_API void tft_predictions_free(tft_predictions* predictions);

/* The shape: forecasts, horizon steps (prediction_length) and quantiles per step; any
 * out-pointer may be NULL. Errors: INVALID_ARGUMENT. */
TFT_API tft_status tft_predictions_shape(const tft_predictions* predictions, size_t* forecasts,
                                         size_t* horizon, size_t* quantiles);

/* The quantile levels, e.g. {0.1, 0.5, 0.9}, into `levels` (room for `count`). Errors:
 * INVALID_ARGUMENT (levels NULL with count > 0), BUFFER_TOO_SMALL (count < quantiles: nothing
 * is written). */
TFT_API tft_status tft_predictions_quantiles(const tft_predictions* predictions, double* levels,
                                             size_t count);

/* Forecast `index`'s description. Errors: INVALID_ARGUMENT (index out of range, info NULL or
 * its struct_size 0). */
TFT_API tft_status tft_predictions_forecast_info(const tft_predictions* predictions,
                                                 size_t index, tft_forecast_info* info);

/* The name of series `series`: its group columns' values joined by "/" ("store_03"), or ""
 * when the data has no group columns (one series), into a caller buffer. Errors: INVALID_ARGUMENT,
 * BUFFER_TOO_SMALL. */
TFT_API tft_status tft_predictions_series_name(const tft_predictions* predictions, size_t series,
                                               char* buf, size_t len, size_t* needed);

/* Copies every forecast's numbers into caller arrays, forecast by forecast (row-major):
 *   values  [forecasts x horizon x quantiles]   actuals [forecasts x horizon] (NaN: unknown)
 *   times   [forecasts x horizon] (the forecast steps' times, as origin)
 * `count` is the array's length in elements. Errors: INVALID_ARGUMENT, BUFFER_TOO_SMALL (the
 * array is too short: nothing is written). */
TFT_API tft_status tft_predictions_values(const tft_predictions* predictions, float* values,
                                          size_t count);
TFT_API tft_status tft_predictions_actuals(const tft_predictions* predictions, float* actuals,
                                           size_t count);
TFT_API tft_status tft_predictions_times(const tft_predictions* predictions, int64_t* times,
                                         size_t count);

/* Writes forecast.csv's layout (one row per forecast step: series columns, origin, time,
 * horizon, one column per quantile, actual) to `path`, atomically. Errors: INVALID_ARGUMENT,
 * IO. */
TFT_API tft_status tft_predictions_write_csv(const tft_predictions* predictions,
                                             const char* path);

/* ---------------------------------------------------------------------------------------
 * Trainer
 *
 * Threads: a trainer is used from one thread at a time, except tft_trainer_cancel, which any
 * thread may call at any time while the trainer is alive (and may race tft_trainer_free).
 * Distinct trainers may train in parallel threads, independently: each has its own random
 * generators (initial weights and dropout, seeded from training.seed), its own recompute
 * timing for the checkpoint planner and its own CPU activation-memory account, so a trainer
 * ends bitwise as it would alone and reports the peaks it would report alone. What they still
 * share: LibTorch's intra-op thread count (set from training.threads when it is > 0; give
 * every trainer the same value), and on a GPU the device's memory statistics (two trainers on
 * one GPU see each other's tensors in their peaks).
 */

typedef struct tft_trainer tft_trainer;

typedef enum tft_progress_kind {
  TFT_PROGRESS_STEP = 0, /* after an optimisation step */
  TFT_PROGRESS_EPOCH = 1 /* after an epoch's validation: the validation fields are set */
} tft_progress_kind;

/* What the progress callback receives (grows; the library sets struct_size to the size it
 * fills). */
typedef struct tft_progress {
  size_t struct_size;
  tft_progress_kind kind;
  int64_t epoch;           /* 1-based */
  int64_t epochs;          /* training.epochs */
  int64_t step;            /* 1-based within the epoch */
  int64_t steps_per_epoch; /* steps of this epoch */
  double train_loss;       /* mean training loss of the epoch so far (training on a GPU: over
                              the steps read back from it, at most 0.1 s behind) */
  double validation_loss;  /* TFT_PROGRESS_EPOCH only; NaN otherwise and without validation */
  double samples_per_second;     /* this epoch so far */
  int64_t peak_activation_bytes; /* largest step of the epoch so far */
  double learning_rate;
} tft_progress;

/* Called after every step and every epoch, on the thread running tft_trainer_train. A
 * non-zero return cancels training (TFT_ERROR_CANCELLED). `progress` is valid during the call
 * only. */
typedef int (*tft_progress_fn)(const tft_progress* progress, void* user);

/* Activation memory of one training step, measured. Frozen like tft_metrics (embedded in
 * tft_train_report); struct_size is still checked. */
typedef struct tft_memory_report {
  size_t struct_size;
  int64_t checkpointed_peak_bytes; /* checkpointing as configured */
  int64_t unchecked_peak_bytes;    /* checkpointing off, same batch */
  double measured_savings;         /* 1 - checkpointed / unchecked */
  double predicted_savings;        /* the seed formula, CheckpointConfig::memory_savings */
  double predicted_compute_overhead; /* the seed formula, compute_overhead */
  size_t num_units;                /* checkpointable units of the model */
} tft_memory_report;

/* How a training run ended (grows). */
typedef struct tft_train_report {
  size_t struct_size;
  int64_t epochs_run;              /* completed epochs, resumed ones included */
  int64_t best_epoch;              /* the epoch whose weights the model keeps (0: initial) */
  int64_t resumed_from_epoch;      /* epochs a resumed snapshot held (0: a fresh run) */
  int early_stopped;               /* 1 when early stopping ended the run */
  double initial_validation_loss;  /* the untrained model's */
  double best_validation_loss;
  double final_validation_loss;    /* the last epoch's */
  double final_train_loss;         /* the last epoch's mean training loss */
  tft_metrics validation;          /* the kept (best) weights on the validation windows;
                                      the library sets its struct_size */
  double train_seconds;            /* training steps only */
  double samples_per_second;
  int64_t peak_activation_bytes;   /* largest training step */
  tft_memory_report memory;        /* measured at the end of the run; struct_size set */
} tft_train_report;

/* Reads the data (config's data.path), builds the model with the config's checkpointing and
 * stores a new trainer in *out. `config` is copied. Errors: INVALID_ARGUMENT, CONFIG (also a
 * checkpoint layer beyond the model's units), IO, DATA (the message names the file, line and
 * column), UNSUPPORTED (a device, or Parquet input, this build lacks). */
TFT_API tft_status tft_trainer_create(const tft_config* config, tft_trainer** out);

/* Releases the trainer; NULL is allowed. Must not race a running tft_trainer_train. It may
 * race tft_trainer_cancel on another thread: that call then either cancels or reports a dead
 * handle (INVALID_ARGUMENT), and never touches freed memory. */
TFT_API void tft_trainer_free(tft_trainer* trainer);

/* Sets (or, with fn NULL, clears) the progress callback; `user` is passed back unchanged.
 * Errors: INVALID_ARGUMENT. */
TFT_API tft_status tft_trainer_set_progress_callback(tft_trainer* trainer, tft_progress_fn fn,
                                                     void* user);

/* Trains from the initial weights for training.epochs epochs (fewer with early stopping),
 * keeps the best epoch's weights and writes the run's files to output.directory (model/,
 * forecast.csv, summary.json, ...; see docs/config.md). `report` may be NULL; its struct_size
 * must be set otherwise. Errors: INVALID_ARGUMENT, IO, NUMERICAL (NaN or infinity: the model
 * keeps the best weights so far), CANCELLED (the callback or tft_trainer_cancel: the last
 * snapshot, of an epoch or of a training.snapshot_every_steps step, stays on disk for
 * tft_trainer_resume). IO also when a file cannot be written (a full disk, a read-only
 * folder): the files already there stay as they were. */
TFT_API tft_status tft_trainer_train(tft_trainer* trainer, tft_train_report* report);

/* The same, continuing from the snapshot of an earlier run with this output.directory (a
 * fresh run when there is none). A resumed run ends bitwise like one that never stopped. */
TFT_API tft_status tft_trainer_resume(tft_trainer* trainer, tft_train_report* report);

/* Asks a running tft_trainer_train to stop at the next step (it returns CANCELLED). Safe from
 * any thread while the trainer is alive; a request made while it is not training is kept for
 * the next train. Errors: INVALID_ARGUMENT. */
TFT_API tft_status tft_trainer_cancel(tft_trainer* trainer);

/* The current weights on the validation windows. Errors: INVALID_ARGUMENT. */
TFT_API tft_status tft_trainer_evaluate(tft_trainer* trainer, tft_metrics* out);

/* Forecasts of the current weights into a new predictions handle. Errors: INVALID_ARGUMENT. */
TFT_API tft_status tft_trainer_predict(tft_trainer* trainer, tft_predictions** out);

/* Forecasts of the current weights written as CSV to `path`. Errors: INVALID_ARGUMENT, IO. */
TFT_API tft_status tft_trainer_predict_csv(tft_trainer* trainer, const char* path);

/* Writes the current weights as a model folder (weights, model and data transforms, config) to
 * `directory`, replacing one that exists; NULL: output.directory/model. Errors:
 * INVALID_ARGUMENT, IO. */
TFT_API tft_status tft_trainer_save(tft_trainer* trainer, const char* directory);

/* Measures one training step's activation peak with checkpointing as configured and with it
 * off (the training state is left as it was). Errors: INVALID_ARGUMENT. */
TFT_API tft_status tft_trainer_memory_report(tft_trainer* trainer, tft_memory_report* out);

/* ---------------------------------------------------------------------------------------
 * A saved model
 */

typedef struct tft_model tft_model;

/* Loads a model folder written by training or tft_trainer_save into a new handle in *out.
 * Errors: INVALID_ARGUMENT, IO (a file missing or unreadable), CONFIG. */
TFT_API tft_status tft_model_load(const char* directory, tft_model** out);

/* Releases the handle; NULL is allowed. */
TFT_API void tft_model_free(tft_model* model);

/* Forecasts for a data file laid out like the training data, with the transforms fitted in
 * training (nothing is refitted): a CSV, or Parquet by its extension (.parquet, .pq) in builds
 * that read Parquet; csv_path NULL: the training data. The validation split of the training
 * config applies. Errors: INVALID_ARGUMENT, IO, DATA, UNSUPPORTED (Parquet in a build without
 * it). */
TFT_API tft_status tft_model_predict(tft_model* model, const char* csv_path,
                                     tft_predictions** out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TFTRAIN_H */
