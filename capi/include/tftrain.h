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
 * Errors: INVALID_ARGUMENT, CONFIG. */
TFT_API tft_status tft_checkpoint_config_from_yaml(const char* yaml, tft_checkpoint_config** out);
TFT_API tft_status tft_checkpoint_config_from_json(const char* json, tft_checkpoint_config** out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TFTRAIN_H */
