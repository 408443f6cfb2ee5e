/* tftrain.i: the one SWIG interface of the C API (capi/include/tftrain.h) for every SWIG
 * target. Go and C# use it (bindings/go/internal/swig, bindings/csharp/generated); each
 * language adds a thin idiomatic layer on top.
 *
 *  - The opaque handles become classes with constructors, destructors and methods (%extend):
 *    CheckpointConfig, Config, Trainer, Predictions, Model. Method names are CamelCase, so the
 *    helpers SWIG generates (struct_Method) never collide with the C functions (struct_method).
 *  - The result structs (Progress, Metrics, MemoryReport, TrainReport, ForecastInfo) become
 *    read-only classes; the methods that fill them set struct_size themselves.
 *  - Every tft_status other than TFT_OK becomes the language's error, with the status and
 *    tft_last_error() read inside the wrapper, on the thread that failed:
 *      Go:     a panic with the string "tftrain-status:<status>:<address of a malloc'd copy of
 *              the message>"; the Go layer takes the message over and returns an error value;
 *      C#:     TfTrain.TftException(status, message) (a pending exception, thrown on return);
 *      others: SWIG_exception(SWIG_RuntimeError, message).
 *  - Strings from (buf, len, needed) calls are returned as the language's strings.
 *  - Index lists (selective checkpointing) go through the small IndexList class, so no array
 *    typemaps are needed; float/int64 results through FloatArray / Int64Array.
 *  - Progress callbacks: C# passes a delegate (tft_progress_fn maps to
 *    TfTrain.NativeProgressCallback); Go passes a cgo.Handle that the exported Go function
 *    tftgoProgress resolves (bindings/go/internal/swig/callback.go). Other targets get
 *    Trainer.ClearProgress only (add a section like these two for them).
 *
 * Regenerate the checked-in code with bindings/swig/generate.sh.
 */
%module tftrain

%{
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tftrain.h"

#if defined(_MSC_VER)
#define TFTSWIG_THREAD_LOCAL __declspec(thread)
#else
#define TFTSWIG_THREAD_LOCAL __thread
#endif

/* The status of the failed tft_* call inside the current wrapper (TFT_OK: none). */
static TFTSWIG_THREAD_LOCAL tft_status tftswig_status = TFT_OK;

/* Records a failure; returns 1 when `status` is TFT_OK. */
static int tftswig_ok(tft_status status) {
  if (status != TFT_OK) {
    tftswig_status = status;
    return 0;
  }
  return 1;
}

/* Growable index list for selective checkpointing. */
typedef struct tftswig_index_list {
  size_t* items;
  size_t count;
  size_t capacity;
} tftswig_index_list;

/* Owned copies of numeric results. */
typedef struct tftswig_float_array {
  float* items;
  size_t count;
} tftswig_float_array;

typedef struct tftswig_int64_array {
  int64_t* items;
  size_t count;
} tftswig_int64_array;

/* Calls a (buf, len, needed) function twice (size query, then copy) and returns a malloc'd
 * string, or NULL with the failure recorded. */
#define TFTSWIG_STRING(call_with_buf_len_needed)                                \
  do {                                                                          \
    size_t needed = 0;                                                          \
    char* buf = NULL;                                                           \
    size_t len = 0;                                                             \
    tft_status s;                                                               \
    for (;;) {                                                                  \
      s = call_with_buf_len_needed;                                             \
      if (s == TFT_OK && buf != NULL) return buf;                               \
      if (s != TFT_OK && s != TFT_ERROR_BUFFER_TOO_SMALL) {                     \
        free(buf);                                                              \
        tftswig_ok(s);                                                          \
        return NULL;                                                            \
      }                                                                         \
      free(buf);                                                                \
      len = needed > 0 ? needed : 1;                                            \
      buf = (char*)malloc(len);                                                 \
      if (buf == NULL) {                                                        \
        tftswig_ok(TFT_ERROR_OUT_OF_MEMORY);                                    \
        return NULL;                                                            \
      }                                                                         \
      buf[0] = '\0';                                                            \
      if (s == TFT_OK && needed <= 1) return buf; /* empty string */           \
    }                                                                           \
  } while (0)
%}

%include <stdint.i>

/* ---------------------------------------------------------------------------------------
 * Errors
 */

#if defined(SWIGGO)
%{
/* Panics with "tftrain-status:<status>:<address>": the address of a malloc'd copy of
 * tft_last_error() (0 when that copy failed), which the Go layer takes over (TakeMessage). SWIG's
 * panic copies at most 1024 bytes of its text, so the message travels beside it, whole. */
static void tftswig_raise(tft_status status) {
  const char* message = tft_last_error();
  size_t size = strlen(message) + 1;
  char* copy = (char*)malloc(size);
  char text[64];
  if (copy != NULL) memcpy(copy, message, size);
  snprintf(text, sizeof text, "tftrain-status:%d:%llx", (int)status,
           (unsigned long long)(uintptr_t)copy);
  _swig_gopanic(text);
}
%}
%exception %{
  tftswig_status = TFT_OK;
  $action
  if (tftswig_status != TFT_OK) tftswig_raise(tftswig_status);
%}

#elif defined(SWIGCSHARP)
%insert(runtime) %{
typedef void (SWIGSTDCALL* tftswig_csharp_raise_fn)(int status, const char* message);
static tftswig_csharp_raise_fn tftswig_csharp_raise = NULL;
#ifdef __cplusplus
extern "C"
#endif
SWIGEXPORT void SWIGSTDCALL TftSwigRegisterRaise(tftswig_csharp_raise_fn fn) {
  tftswig_csharp_raise = fn;
}
%}
%pragma(csharp) imclasscode=%{
  internal delegate void TftRaiseDelegate(int status, string message);

  [global::System.Runtime.InteropServices.DllImport("$dllimport", EntryPoint="TftSwigRegisterRaise")]
  static extern void TftSwigRegisterRaise(TftRaiseDelegate fn);

  protected class TftRaiseHelper {
    static readonly TftRaiseDelegate raiseDelegate = Raise;
    static void Raise(int status, string message) {
      SWIGPendingException.Set(new global::TfTrain.TftException((global::TfTrain.Status)status, message));
    }
    static TftRaiseHelper() { TftSwigRegisterRaise(raiseDelegate); }
  }
  static protected TftRaiseHelper tftRaiseHelper = new TftRaiseHelper();
%}
%exception %{
  tftswig_status = TFT_OK;
  $action
  if (tftswig_status != TFT_OK) {
    if (tftswig_csharp_raise != NULL) tftswig_csharp_raise((int)tftswig_status, tft_last_error());
    return $null;
  }
%}

#else
%include <exception.i>
%exception %{
  tftswig_status = TFT_OK;
  $action
  if (tftswig_status != TFT_OK) SWIG_exception(SWIG_RuntimeError, tft_last_error());
%}
#endif

/* ---------------------------------------------------------------------------------------
 * Names: the C functions are reached through the classes only.
 */

%rename("$ignore", %$isfunction, regextarget=1) "^tft_";
%ignore struct_size;
%immutable;

%rename(Status) tft_status;
%rename(CheckpointStrategy) tft_checkpoint_strategy;
%rename(ProgressKind) tft_progress_kind;
%rename(CheckpointConfig) tft_checkpoint_config;
%rename(Config) tft_config;
%rename(Trainer) tft_trainer;
%rename(Predictions) tft_predictions;
%rename(Model) tft_model;
%rename(Progress) tft_progress;
%rename(Metrics) tft_metrics;
%rename(MemoryReport) tft_memory_report;
%rename(TrainReport) tft_train_report;
%rename(ForecastInfo) tft_forecast_info;
%rename(IndexList) tftswig_index_list;
%rename(FloatArray) tftswig_float_array;
%rename(Int64Array) tftswig_int64_array;

/* size_t as 64 bits everywhere (SWIG's C# default is uint). */
%apply unsigned long long { size_t };

/* Functions returning a new handle or a malloc'd string hand ownership to the caller. */
%newobject tft_checkpoint_config::Uniform;
%newobject tft_checkpoint_config::Selective;
%newobject tft_checkpoint_config::Dynamic;
%newobject tft_checkpoint_config::FromYaml;
%newobject tft_checkpoint_config::FromJson;
%newobject tft_checkpoint_config::Clone;
%newobject tft_checkpoint_config::Summary;
%newobject tft_checkpoint_config::ToYaml;
%newobject tft_checkpoint_config::ToJson;
%newobject tft_config::LoadFile;
%newobject tft_config::Clone;
%newobject tft_config::Get;
%newobject tft_config::GetCheckpoint;
%newobject tft_config::ToYaml;
%newobject tft_trainer::Predict;
%newobject tft_predictions::SeriesName;
%newobject tft_predictions::Values;
%newobject tft_predictions::Actuals;
%newobject tft_predictions::Times;
%newobject tft_model::Predict;

#if defined(SWIGCSHARP)
/* The generated classes are internal: the public C# API is bindings/csharp/src. */
%typemap(csclassmodifiers) SWIGTYPE "internal class"
%typemap(csclassmodifiers) enum SWIGTYPE "internal enum"
%pragma(csharp) moduleclassmodifiers="internal class"
#endif

/* ---------------------------------------------------------------------------------------
 * Callbacks
 */

#if defined(SWIGCSHARP)
/* The delegate type is TfTrain.NativeProgressCallback (bindings/csharp/src/Errors.cs):
 *   [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
 *   internal delegate int NativeProgressCallback(IntPtr progress, IntPtr user);
 * The caller keeps the delegate alive while it is set. */
%typemap(ctype) tft_progress_fn "tft_progress_fn"
%typemap(imtype) tft_progress_fn "global::TfTrain.NativeProgressCallback"
%typemap(cstype) tft_progress_fn "global::TfTrain.NativeProgressCallback"
%typemap(in) tft_progress_fn %{ $1 = $input; %}
%typemap(csin) tft_progress_fn "$csinput"
#endif

#if defined(SWIGGO)
%{
/* Exported by bindings/go/internal/swig/callback.go (//export tftgoProgress). */
extern int tftgoProgress(tft_progress* progress, uintptr_t handle);

static int tftswig_go_progress(const tft_progress* progress, void* user) {
  return tftgoProgress((tft_progress*)progress, (uintptr_t)user);
}
%}
#endif

/* ---------------------------------------------------------------------------------------
 * The declarations: the header itself (functions ignored above), then the classes.
 */

%include "tftrain.h"

/* The opaque handles, declared for SWIG only so that %extend can give them members. */
%nodefaultctor tft_predictions; /* made by Trainer.Predict and Model.Predict */
struct tft_checkpoint_config {};
struct tft_config {};
struct tft_trainer {};
struct tft_predictions {};
struct tft_model {};

/* A tftswig_index_list is opaque to the languages: construct, Add, Count. */
%nodefaultctor tftswig_index_list;
%nodefaultdtor tftswig_index_list;
typedef struct tftswig_index_list {} tftswig_index_list;
%extend tftswig_index_list {
  tftswig_index_list() {
    return (tftswig_index_list*)calloc(1, sizeof(tftswig_index_list));
  }
  ~tftswig_index_list() {
    if ($self != NULL) free($self->items);
    free($self);
  }
  void Add(uint64_t index) {
    if ($self->count == $self->capacity) {
      size_t capacity = $self->capacity ? 2 * $self->capacity : 8;
      size_t* items = (size_t*)realloc($self->items, capacity * sizeof(size_t));
      if (items == NULL) {
        tftswig_ok(TFT_ERROR_OUT_OF_MEMORY);
        return;
      }
      $self->items = items;
      $self->capacity = capacity;
    }
    $self->items[$self->count++] = (size_t)index;
  }
  uint64_t Count() { return $self->count; }
}

%nodefaultctor tftswig_float_array;
typedef struct tftswig_float_array {} tftswig_float_array;
%extend tftswig_float_array {
  ~tftswig_float_array() {
    if ($self != NULL) free($self->items);
    free($self);
  }
  uint64_t Count() { return $self->count; }
  float Get(uint64_t i) { return i < $self->count ? $self->items[i] : 0.0f; }
}

%nodefaultctor tftswig_int64_array;
typedef struct tftswig_int64_array {} tftswig_int64_array;
%extend tftswig_int64_array {
  ~tftswig_int64_array() {
    if ($self != NULL) free($self->items);
    free($self);
  }
  uint64_t Count() { return $self->count; }
  int64_t Get(uint64_t i) { return i < $self->count ? $self->items[i] : 0; }
}

/* Module-level functions. */
%rename(VersionString) tftswig_version_string;
%rename(VersionMajor) tftswig_version_major;
%rename(VersionMinor) tftswig_version_minor;
%rename(VersionPatch) tftswig_version_patch;
%rename(StatusName) tftswig_status_name;
%rename(LastError) tftswig_last_error;
%inline %{
const char* tftswig_version_string(void) { return tft_version_string(); }
int tftswig_version_major(void) { int v = 0; tft_version(&v, NULL, NULL); return v; }
int tftswig_version_minor(void) { int v = 0; tft_version(NULL, &v, NULL); return v; }
int tftswig_version_patch(void) { int v = 0; tft_version(NULL, NULL, &v); return v; }
const char* tftswig_status_name(int status) { return tft_status_name((tft_status)status); }
const char* tftswig_last_error(void) { return tft_last_error(); }
%}

/* ---------------------------------------------------------------------------------------
 * CheckpointConfig
 */

%extend tft_checkpoint_config {
  /* The default constructor is none(). */
  tft_checkpoint_config() {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_checkpoint_config_none(&out));
    return out;
  }
  ~tft_checkpoint_config() { tft_checkpoint_config_free($self); }

  static tft_checkpoint_config* Uniform(uint64_t interval) {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_checkpoint_config_uniform((size_t)interval, &out));
    return out;
  }
  static tft_checkpoint_config* Selective(const tftswig_index_list* layers) {
    tft_checkpoint_config* out = NULL;
    if (layers == NULL) {
      tftswig_ok(tft_checkpoint_config_selective(NULL, 0, &out));
    } else {
      tftswig_ok(tft_checkpoint_config_selective(layers->items, layers->count, &out));
    }
    return out;
  }
  static tft_checkpoint_config* Dynamic(uint64_t num_layers, double memory_fraction) {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_checkpoint_config_dynamic((size_t)num_layers, memory_fraction, &out));
    return out;
  }
  static tft_checkpoint_config* FromYaml(const char* yaml) {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_checkpoint_config_from_yaml(yaml, &out));
    return out;
  }
  static tft_checkpoint_config* FromJson(const char* json) {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_checkpoint_config_from_json(json, &out));
    return out;
  }
  tft_checkpoint_config* Clone() {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_checkpoint_config_clone($self, &out));
    return out;
  }

  void SetCheckpointAttention(bool enabled) {
    tftswig_ok(tft_checkpoint_config_set_checkpoint_attention($self, enabled ? 1 : 0));
  }
  void SetCheckpointFfn(bool enabled) {
    tftswig_ok(tft_checkpoint_config_set_checkpoint_ffn($self, enabled ? 1 : 0));
  }
  void SetMinInterval(uint64_t interval) {
    tftswig_ok(tft_checkpoint_config_set_min_interval($self, (size_t)interval));
  }

  int Strategy() {
    tft_checkpoint_strategy out = TFT_CHECKPOINT_NONE;
    tftswig_ok(tft_checkpoint_config_strategy($self, &out));
    return (int)out;
  }
  bool CheckpointAttention() {
    int out = 0;
    tftswig_ok(tft_checkpoint_config_checkpoint_attention($self, &out));
    return out != 0;
  }
  bool CheckpointFfn() {
    int out = 0;
    tftswig_ok(tft_checkpoint_config_checkpoint_ffn($self, &out));
    return out != 0;
  }
  uint64_t MinInterval() {
    size_t out = 0;
    tftswig_ok(tft_checkpoint_config_min_interval($self, &out));
    return (uint64_t)out;
  }

  bool ShouldCheckpoint(uint64_t layer) {
    int out = 0;
    tftswig_ok(tft_checkpoint_config_should_checkpoint($self, (size_t)layer, &out));
    return out != 0;
  }
  double MemorySavings(uint64_t num_layers) {
    double out = 0.0;
    tftswig_ok(tft_checkpoint_config_memory_savings($self, (size_t)num_layers, &out));
    return out;
  }
  double ComputeOverhead(uint64_t num_layers) {
    double out = 0.0;
    tftswig_ok(tft_checkpoint_config_compute_overhead($self, (size_t)num_layers, &out));
    return out;
  }
  void Validate() { tftswig_ok(tft_checkpoint_config_validate($self)); }

  char* Summary() { TFTSWIG_STRING(tft_checkpoint_config_summary($self, buf, len, &needed)); }
  char* ToYaml() { TFTSWIG_STRING(tft_checkpoint_config_to_yaml($self, buf, len, &needed)); }
  char* ToJson() { TFTSWIG_STRING(tft_checkpoint_config_to_json($self, buf, len, &needed)); }
}

/* ---------------------------------------------------------------------------------------
 * Config
 */

%extend tft_config {
  /* From YAML text (tft_config_load_string). */
  tft_config(const char* yaml) {
    tft_config* out = NULL;
    tftswig_ok(tft_config_load_string(yaml, &out));
    return out;
  }
  ~tft_config() { tft_config_free($self); }

  static tft_config* LoadFile(const char* path) {
    tft_config* out = NULL;
    tftswig_ok(tft_config_load_file(path, &out));
    return out;
  }
  tft_config* Clone() {
    tft_config* out = NULL;
    tftswig_ok(tft_config_clone($self, &out));
    return out;
  }
  char* Get(const char* key) { TFTSWIG_STRING(tft_config_get($self, key, buf, len, &needed)); }
  void Set(const char* key, const char* value) { tftswig_ok(tft_config_set($self, key, value)); }
  void SetCheckpoint(const tft_checkpoint_config* checkpoint) {
    tftswig_ok(tft_config_set_checkpoint($self, checkpoint));
  }
  tft_checkpoint_config* GetCheckpoint() {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_config_get_checkpoint($self, &out));
    return out;
  }
  void Validate() { tftswig_ok(tft_config_validate($self)); }
  char* ToYaml() { TFTSWIG_STRING(tft_config_to_yaml($self, buf, len, &needed)); }
}

/* ---------------------------------------------------------------------------------------
 * Results: read-only structs; the library fills them.
 */

%extend tft_metrics {
  tft_metrics() {
    tft_metrics* m = (tft_metrics*)calloc(1, sizeof(tft_metrics));
    if (m != NULL) m->struct_size = sizeof(tft_metrics);
    return m;
  }
  ~tft_metrics() { free($self); }
}
%extend tft_memory_report {
  tft_memory_report() {
    tft_memory_report* m = (tft_memory_report*)calloc(1, sizeof(tft_memory_report));
    if (m != NULL) m->struct_size = sizeof(tft_memory_report);
    return m;
  }
  ~tft_memory_report() { free($self); }
}
%extend tft_train_report {
  tft_train_report() {
    tft_train_report* r = (tft_train_report*)calloc(1, sizeof(tft_train_report));
    if (r != NULL) r->struct_size = sizeof(tft_train_report);
    return r;
  }
  ~tft_train_report() { free($self); }
}
%extend tft_forecast_info {
  tft_forecast_info() {
    tft_forecast_info* f = (tft_forecast_info*)calloc(1, sizeof(tft_forecast_info));
    if (f != NULL) f->struct_size = sizeof(tft_forecast_info);
    return f;
  }
  ~tft_forecast_info() { free($self); }
}
/* Progress records are only lent to callbacks; no constructor. */
%nodefaultctor tft_progress;
%nodefaultdtor tft_progress;

/* ---------------------------------------------------------------------------------------
 * Predictions and Model
 */

%extend tft_predictions {
  ~tft_predictions() { tft_predictions_free($self); }
  uint64_t Forecasts() {
    size_t n = 0;
    tftswig_ok(tft_predictions_shape($self, &n, NULL, NULL));
    return n;
  }
  uint64_t Horizon() {
    size_t n = 0;
    tftswig_ok(tft_predictions_shape($self, NULL, &n, NULL));
    return n;
  }
  uint64_t QuantileCount() {
    size_t n = 0;
    tftswig_ok(tft_predictions_shape($self, NULL, NULL, &n));
    return n;
  }
  /* The quantile levels as floats would lose precision: a FloatArray is not used here. */
  double Quantile(uint64_t i) {
    size_t n = 0;
    double* levels;
    double value = 0.0;
    if (!tftswig_ok(tft_predictions_shape($self, NULL, NULL, &n))) return 0.0;
    if (i >= n) {
      tftswig_ok(tft_predictions_quantiles($self, NULL, 1)); /* INVALID_ARGUMENT, message set */
      return 0.0;
    }
    levels = (double*)malloc(n * sizeof(double));
    if (levels == NULL) {
      tftswig_ok(TFT_ERROR_OUT_OF_MEMORY);
      return 0.0;
    }
    if (tftswig_ok(tft_predictions_quantiles($self, levels, n))) value = levels[i];
    free(levels);
    return value;
  }
  void Info(uint64_t index, tft_forecast_info* info) {
    if (info != NULL) info->struct_size = sizeof(tft_forecast_info);
    tftswig_ok(tft_predictions_forecast_info($self, (size_t)index, info));
  }
  char* SeriesName(uint64_t series) {
    TFTSWIG_STRING(tft_predictions_series_name($self, (size_t)series, buf, len, &needed));
  }
  tftswig_float_array* Values() {
    size_t f = 0, h = 0, q = 0;
    tftswig_float_array* a;
    if (!tftswig_ok(tft_predictions_shape($self, &f, &h, &q))) return NULL;
    a = (tftswig_float_array*)calloc(1, sizeof(*a));
    if (a != NULL) a->items = (float*)malloc((f * h * q + 1) * sizeof(float));
    if (a == NULL || a->items == NULL) {
      if (a != NULL) free(a);
      tftswig_ok(TFT_ERROR_OUT_OF_MEMORY);
      return NULL;
    }
    a->count = f * h * q;
    if (!tftswig_ok(tft_predictions_values($self, a->items, a->count))) {
      free(a->items);
      free(a);
      return NULL;
    }
    return a;
  }
  tftswig_float_array* Actuals() {
    size_t f = 0, h = 0;
    tftswig_float_array* a;
    if (!tftswig_ok(tft_predictions_shape($self, &f, &h, NULL))) return NULL;
    a = (tftswig_float_array*)calloc(1, sizeof(*a));
    if (a != NULL) a->items = (float*)malloc((f * h + 1) * sizeof(float));
    if (a == NULL || a->items == NULL) {
      if (a != NULL) free(a);
      tftswig_ok(TFT_ERROR_OUT_OF_MEMORY);
      return NULL;
    }
    a->count = f * h;
    if (!tftswig_ok(tft_predictions_actuals($self, a->items, a->count))) {
      free(a->items);
      free(a);
      return NULL;
    }
    return a;
  }
  tftswig_int64_array* Times() {
    size_t f = 0, h = 0;
    tftswig_int64_array* a;
    if (!tftswig_ok(tft_predictions_shape($self, &f, &h, NULL))) return NULL;
    a = (tftswig_int64_array*)calloc(1, sizeof(*a));
    if (a != NULL) a->items = (int64_t*)malloc((f * h + 1) * sizeof(int64_t));
    if (a == NULL || a->items == NULL) {
      if (a != NULL) free(a);
      tftswig_ok(TFT_ERROR_OUT_OF_MEMORY);
      return NULL;
    }
    a->count = f * h;
    if (!tftswig_ok(tft_predictions_times($self, a->items, a->count))) {
      free(a->items);
      free(a);
      return NULL;
    }
    return a;
  }
  void WriteCsv(const char* path) { tftswig_ok(tft_predictions_write_csv($self, path)); }
}

%extend tft_model {
  tft_model(const char* directory) {
    tft_model* out = NULL;
    tftswig_ok(tft_model_load(directory, &out));
    return out;
  }
  ~tft_model() { tft_model_free($self); }
  /* csv_path NULL (or "" from languages without null strings): the training data. */
  tft_predictions* Predict(const char* csv_path) {
    tft_predictions* out = NULL;
    tftswig_ok(tft_model_predict($self, (csv_path != NULL && csv_path[0] != '\0') ? csv_path : NULL, &out));
    return out;
  }
}

/* ---------------------------------------------------------------------------------------
 * Trainer
 */

%extend tft_trainer {
  tft_trainer(const tft_config* config) {
    tft_trainer* out = NULL;
    tftswig_ok(tft_trainer_create(config, &out));
    return out;
  }
  ~tft_trainer() { tft_trainer_free($self); }

  /* Clears the progress callback. */
  void ClearProgress() { tftswig_ok(tft_trainer_set_progress_callback($self, NULL, NULL)); }
#if defined(SWIGCSHARP)
  /* The delegate must stay alive until it is cleared or the trainer is freed. */
  void SetProgress(tft_progress_fn fn) {
    tftswig_ok(tft_trainer_set_progress_callback($self, fn, NULL));
  }
#endif
#if defined(SWIGGO)
  /* A cgo.Handle value resolved by tftgoProgress; 0 clears. */
  void SetProgressHandle(uint64_t handle) {
    tftswig_ok(tft_trainer_set_progress_callback($self, handle ? tftswig_go_progress : NULL,
                                                  (void*)(uintptr_t)handle));
  }
#endif
  void Train(tft_train_report* report) {
    if (report != NULL) report->struct_size = sizeof(tft_train_report);
    tftswig_ok(tft_trainer_train($self, report));
  }
  void Resume(tft_train_report* report) {
    if (report != NULL) report->struct_size = sizeof(tft_train_report);
    tftswig_ok(tft_trainer_resume($self, report));
  }
  void Cancel() { tftswig_ok(tft_trainer_cancel($self)); }
  void Evaluate(tft_metrics* out) {
    if (out != NULL) out->struct_size = sizeof(tft_metrics);
    tftswig_ok(tft_trainer_evaluate($self, out));
  }
  tft_predictions* Predict() {
    tft_predictions* out = NULL;
    tftswig_ok(tft_trainer_predict($self, &out));
    return out;
  }
  void PredictCsv(const char* path) { tftswig_ok(tft_trainer_predict_csv($self, path)); }
  /* directory NULL or "": output.directory/model. */
  void Save(const char* directory) {
    tftswig_ok(tft_trainer_save($self, (directory != NULL && directory[0] != '\0') ? directory : NULL));
  }
  void MeasureMemory(tft_memory_report* out) {
    if (out != NULL) out->struct_size = sizeof(tft_memory_report);
    tftswig_ok(tft_trainer_memory_report($self, out));
  }
}
