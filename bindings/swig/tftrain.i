/* tftrain.i: the one SWIG interface of the C API (capi/include/tftrain.h) for every SWIG
 * target. Go and C# use it (bindings/go/internal/swig, bindings/csharp/generated); each
 * language adds a thin idiomatic layer on top.
 *
 *  - The opaque handles become classes with constructors, destructors and methods (%extend):
 *    CheckpointConfig, Config, Trainer, TrainReport, Predictions, Model, Data, BacktestReport
 *    (whose constructor runs tft_backtest_run without a progress callback, and its static Run
 *    or RunWithProgressHandle with one). A method is named
 *    after the C function it calls, its action in CamelCase (tft_checkpoint_config_get_summary
 *    is CheckpointConfig.GetSummary, tft_config_create_from_file the static
 *    Config.CreateFromFile); tft_T_create_from_yaml / _from_directory and tft_trainer_create
 *    are constructors, tft_T_free the destructor, and a call with several outputs becomes one
 *    method per output (tft_predictions_get_shape: GetForecastCount, GetHorizon,
 *    GetQuantileCount). CamelCase keeps the helpers SWIG generates (struct_Method) apart from
 *    the C functions (struct_method).
 *  - The result structs (Progress, Metrics, MemoryReport, TrainSummary, ForecastInfo,
 *    BacktestSummary) become
 *    read-only classes; the methods that fill them set struct_size themselves.
 *  - Every tft_status other than TFT_OK becomes the language's error, with the status and
 *    tft_last_error() read inside the wrapper, on the thread that failed:
 *      Go:     a panic with the string "tftrain-status:<status>:<address of a malloc'd copy of
 *              the message>"; the Go layer takes the message over and returns an error value;
 *      C#:     TfTrain.TftException(status, message), TftOutOfMemoryException for
 *              TFT_ERROR_OUT_OF_MEMORY (a pending exception, thrown on return);
 *      others: SWIG_exception(SWIG_RuntimeError, message).
 *  - Strings from (buf, len, needed) calls are returned as the language's strings, arrays
 *    from (array, count, needed) calls as FloatArray / Int64Array (size query, then copy).
 *  - Index lists (selective checkpointing) go through the small IndexList class, so no array
 *    typemaps are needed; float/int64 results through FloatArray / Int64Array.
 *  - Progress callbacks: C# passes a delegate (tft_progress_fn maps to
 *    TfTrain.NativeProgressCallback); Go passes a cgo.Handle that the exported Go function
 *    tftgoProgress resolves (bindings/go/internal/swig/callback.go). Other targets get
 *    Trainer.ClearProgress only (add a section like these two for them).
 *
 * The classes are in checkpoint_config.i, config.i (with the result structs), predictions.i
 * (with Model), trainer.i (with TrainReport) and data.i (Data, and the calls that take or give
 * Arrow streams). Regenerate the checked-in code with
 * bindings/swig/generate.sh.
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

/* Calls an (array, count, needed) function twice (size query, then copy) into a new
 * tftswig_<kind>_array `a` of element type `type`, and returns it, or NULL with the failure
 * recorded. */
#define TFTSWIG_ARRAY(kind, type, call_with_items_count_needed)                  \
  do {                                                                          \
    size_t needed = 0;                                                          \
    type* items = NULL;                                                         \
    size_t count = 0;                                                           \
    tftswig_##kind##_array* a;                                                  \
    if (!tftswig_ok(call_with_items_count_needed)) return NULL;                 \
    count = needed;                                                             \
    a = (tftswig_##kind##_array*)calloc(1, sizeof(*a));                         \
    items = (type*)malloc((count + 1) * sizeof(type));                          \
    if (a == NULL || items == NULL) {                                           \
      free(a);                                                                  \
      free(items);                                                              \
      tftswig_ok(TFT_ERROR_OUT_OF_MEMORY);                                      \
      return NULL;                                                              \
    }                                                                           \
    if (!tftswig_ok(call_with_items_count_needed)) {                            \
      free(a);                                                                  \
      free(items);                                                              \
      return NULL;                                                              \
    }                                                                           \
    a->items = items;                                                           \
    a->count = count;                                                           \
    return a;                                                                   \
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
      SWIGPendingException.Set(global::TfTrain.TftException.ForStatus((global::TfTrain.Status)status, message));
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
%rename(Data) tft_data;
%rename(Progress) tft_progress;
%rename(Metrics) tft_metrics;
%rename(MemoryReport) tft_memory_report;
%rename(TrainReport) tft_train_report;
%rename(TrainSummary) tft_train_summary;
%rename(ForecastInfo) tft_forecast_info;
%rename(BacktestReport) tft_backtest_report;
%rename(BacktestSummary) tft_backtest_summary;
%rename(Forecaster) tft_forecaster;
%rename(IndexList) tftswig_index_list;
%rename(FloatArray) tftswig_float_array;
%rename(Int64Array) tftswig_int64_array;

/* size_t as 64 bits everywhere (SWIG's C# default is uint). */
%apply unsigned long long { size_t };

/* Functions returning a new handle or a malloc'd string hand ownership to the caller. */
%newobject tft_checkpoint_config::CreateUniform;
%newobject tft_checkpoint_config::CreateSelective;
%newobject tft_checkpoint_config::CreateDynamic;
%newobject tft_checkpoint_config::CreateFromYaml;
%newobject tft_checkpoint_config::CreateFromJson;
%newobject tft_checkpoint_config::Clone;
%newobject tft_checkpoint_config::GetSummary;
%newobject tft_checkpoint_config::ToYaml;
%newobject tft_checkpoint_config::ToJson;
%newobject tft_config::CreateFromFile;
%newobject tft_config::Clone;
%newobject tft_config::GetValue;
%newobject tft_config::GetCheckpoint;
%newobject tft_config::ToYaml;
%newobject tft_trainer::Train;
%newobject tft_trainer::Resume;
%newobject tft_trainer::Predict;
%newobject tft_predictions::GetSeriesName;
%newobject tft_predictions::GetValues;
%newobject tft_predictions::GetActuals;
%newobject tft_predictions::GetTimes;
%newobject tft_model::Predict;
%newobject tft_trainer::CreateFromData;
%newobject tft_trainer::PredictData;
%newobject tft_model::PredictData;
%newobject tft_backtest_report::Run;
%newobject tft_backtest_report::RunWithProgressHandle;

/* The Arrow C Data Interface's structs and flags: filled and read by each language's own Arrow
 * library, passed by address (data.i). */
%ignore ArrowSchema;
%ignore ArrowArray;
%ignore ArrowArrayStream;
%ignore ARROW_FLAG_DICTIONARY_ORDERED;
%ignore ARROW_FLAG_NULLABLE;
%ignore ARROW_FLAG_MAP_KEYS_SORTED;

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
%nodefaultctor tft_predictions;  /* made by Trainer.Predict and Model.Predict */
%nodefaultctor tft_train_report; /* made by Trainer.Train and Trainer.Resume */
struct tft_checkpoint_config {};
struct tft_config {};
struct tft_trainer {};
struct tft_predictions {};
struct tft_model {};
struct tft_data {};
struct tft_train_report {};
struct tft_backtest_report {};

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
%rename(ApiVersion) tftswig_api_version;
%rename(StatusName) tftswig_status_name;
%rename(LastError) tftswig_last_error;
%inline %{
const char* tftswig_version_string(void) { return tft_version_string(); }
int tftswig_version_major(void) { int v = 0; tft_version(&v, NULL, NULL); return v; }
int tftswig_version_minor(void) { int v = 0; tft_version(NULL, &v, NULL); return v; }
int tftswig_version_patch(void) { int v = 0; tft_version(NULL, NULL, &v); return v; }
int tftswig_api_version(void) { return tft_api_version(); }
const char* tftswig_status_name(int status) { return tft_status_name((tft_status)status); }
const char* tftswig_last_error(void) { return tft_last_error(); }
%}

%include "checkpoint_config.i"
%include "config.i"
%include "predictions.i"
%include "trainer.i"
%include "data.i"
