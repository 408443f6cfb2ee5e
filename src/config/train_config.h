// The training configuration: one YAML file (docs/config.md) <-> one plain struct.
//
//   data        where the CSV is and which column plays which role
//   windows     encoder / prediction length, stride between windows
//   split       validation by time: the last part of every series
//   model       the model's hyper-parameters (the schema comes from `data`, the lengths from
//               `windows`; make_model_config() puts the three together)
//   training    optimisation: epochs, batch size, learning rate and its schedule, ...
//   checkpoint  gradient checkpointing (CheckpointConfig, its own schema)
//   output      where runs write their files
//   backtest    a rolling-origin backtest's folds (tft-train backtest)
//
// Plain data with defaults, like every config struct here: fields may be set directly, and
// nothing is guaranteed valid until validate() says so. Reading and writing YAML, and get/set
// by dotted key, live in train_config_io.h. No LibTorch and no YAML library in this header.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_config.h"
#include "model/model_config.h"
#include "nn/precision.h"

namespace tft {

// What to do with a missing value (a field equal to one of data.na_values) in a real or
// categorical column. The time and group columns never accept a missing value.
enum class MissingValuePolicy {
  Error,        // "error": the row is reported (the default: nothing is guessed)
  ForwardFill,  // "forward_fill": the previous row's value of the same series; an error when
                // the series' first row has it missing
  DropRow,      // "drop_row": the row is skipped as if it were not in the file
};

// How the time column is read.
enum class TimeFormat {
  Auto,     // "auto": integer when the first value is an integer, else ISO 8601
  Integer,  // "integer": a time index (any int64)
  Iso8601,  // "iso8601": dates or date-times (data/iso8601.h)
};

// How the time-varying reals, and the target under data.target_normalizer.scope series, are
// standardised ((x - mean) / std, fitted on the training part of each series only). Static reals
// are always standardised across series (per-series statistics of a constant would be 0 / 0),
// except with None.
enum class ScalingMode {
  PerSeries,  // "per_series": one mean/std per series and column (the default)
  Global,     // "global": one mean/std per column over the training parts of all series
  None,       // "none": values go to the model as they are
};

// How the target is normalised for the model (data.target_normalizer; docs/config.md says
// when to use which). The model sees and predicts (T(y) - center) / scale, where T is the
// transformation; forecasts are written back as T^-1(prediction * scale + center).
enum class TargetScope {
  Auto,     // "auto": encoder, unless center auto's pilot fits choose series (with center
            // statistic; train/center_selection.h). Never saved: a model keeps its choice
  Series,   // "series": center and scale fitted on the training part of each series
            // (data.scaling per_series), of all series (global), or none (0 and 1)
  Encoder,  // "encoder": center and scale of each window's encoder steps, so the model
            // forecasts relative to the recent level (pytorch-forecasting's EncoderNormalizer)
};

enum class TargetCenter {
  Auto,       // "auto": chosen by pilot fits on the training part when the trainer starts
              // (train/center_selection.h) among last, seasonal (when a season fits in the
              // encoder) and, under scope auto, statistic with scope series; statistic alone
              // under scope series. Where no pilot can run, the data's rule when it loads
              // (DatasetBuilder::resolve_target_center). Never saved: a model keeps its choice
  Statistic,  // "statistic": the method's center (mean, or median for robust)
  Last,       // "last": the last encoder value (scope encoder only): the model forecasts the
              // change from it, and its untrained output is the naive forecast
  Seasonal,   // "seasonal": the encoder as last; each decoder step on the value one season
              // (model.seasonality) earlier: its untrained output is the seasonal naive forecast
};

enum class TargetMethod {
  Standard,  // "standard": mean and standard deviation
  Robust,    // "robust": median and half the interquartile range (outliers pull neither)
};

enum class TargetTransformation {
  None,      // "none"
  Log,       // "log": log(y); every target must be > 0
  Log1p,     // "log1p": log(1 + y); every target must be > -1 (counts with zeros)
  Softplus,  // "softplus": log(exp(y) - 1), inverted by softplus; every target must be > 0
};

struct TargetNormalizerConfig {
  TargetScope scope = TargetScope::Auto;
  TargetCenter center = TargetCenter::Auto;
  TargetMethod method = TargetMethod::Standard;
  TargetTransformation transformation = TargetTransformation::None;
};

bool operator==(const TargetNormalizerConfig& a, const TargetNormalizerConfig& b);
bool operator!=(const TargetNormalizerConfig& a, const TargetNormalizerConfig& b);

// The c10d backend of a data-parallel job (src/distributed).
enum class DistributedBackend {
  Auto,  // "auto": NCCL on CUDA devices where the build has it, else Gloo (as PyTorch does)
  Gloo,  // "gloo": CPU and GPU tensors (a GPU's through the host)
  Nccl,  // "nccl": CUDA devices only, in a CUDA build with NCCL (TFT_WITH_NCCL)
};

// A refit (training.init_from, docs/refit.md): what happens to the saved model's fitted state.
enum class InitScalers {
  Keep,   // "keep": the saved scalers (a series they lack gets statistics of its own training
          // part); the model sees new rows exactly as it saw the old ones
  Refit,  // "refit": the reals' scalers fitted again on this data's training parts
};

enum class InitCategories {
  Unknown,  // "unknown": a category the saved encoders lack takes the unknown bucket (code 0),
            // as it would in predict
  Grow,     // "grow": it gets the next code and a new embedding row, which starts as a copy of
            // the unknown bucket's row (so the refit starts from the saved model's forecasts)
};

enum class LrScheduleKind {
  None,             // "none": a constant learning rate
  ReduceOnPlateau,  // "reduce_on_plateau": lr *= factor after `patience` epochs without a
                    // better validation loss, never below min_lr
};

// A categorical column; its cardinality comes from the data (the fitted encoder).
struct CategoricalColumn {
  std::string name;
  // 0: automatic (model_config.h, embedding_dim_for).
  std::int64_t embedding_dim = 0;
};

bool operator==(const CategoricalColumn& a, const CategoricalColumn& b);
bool operator!=(const CategoricalColumn& a, const CategoricalColumn& b);

// Names usable in known_reals / known_categoricals without a CSV column of that name (a CSV
// column of the same name wins): computed from the time column.
//   day_of_week (0 = Monday .. 6), month (1-12), day_of_month (1-31), hour (0-23):
//     calendar fields of an ISO 8601 time column (as written, i.e. local time)
//   relative_time_idx: position in the window relative to the first decoder step, divided by
//     encoder_length ((p - encoder_length) / encoder_length; -1 at the first encoder step,
//     0 at the first decoder step); a real only, never scaled
const std::vector<std::string>& derived_feature_names();
bool is_derived_feature(const std::string& name);

struct DataConfig {
  // The CSV or Parquet file. Relative paths in a YAML file resolve against the file's folder.
  // Optional: data handed over in memory (an Arrow stream, data/arrow_data.h) needs none, and
  // reading a file without one is a ConfigError naming data.path (data/data_file.h).
  std::string path;
  // auto (by the extension: .parquet and .pq are Parquet), csv or parquet (data/data_file.h).
  std::string format = "auto";
  char delimiter = ',';
  std::string time_column;
  TimeFormat time_format = TimeFormat::Auto;
  // Columns whose values together identify a series; none: the whole file is one series.
  std::vector<std::string> group_columns;
  std::string target;
  std::vector<std::string> static_reals;
  std::vector<CategoricalColumn> static_categoricals;
  std::vector<std::string> known_reals;
  std::vector<CategoricalColumn> known_categoricals;
  std::vector<std::string> unknown_reals;
  std::vector<CategoricalColumn> unknown_categoricals;
  MissingValuePolicy missing_values = MissingValuePolicy::Error;
  // Field texts that mean "missing" (compared exactly, after removing quotes).
  std::vector<std::string> na_values{""};
  ScalingMode scaling = ScalingMode::PerSeries;
  TargetNormalizerConfig target_normalizer;
};

struct WindowConfig {
  std::int64_t encoder_length = 0;     // required
  std::int64_t prediction_length = 0;  // required
  // Rows between the starts of consecutive windows of a series (training and validation).
  std::int64_t stride = 1;
};

// Validation by time: the last rows of every series. Exactly one of the two is set; a YAML
// file may give either (not both); set_config_value on one clears the other. 0 means no
// validation set.
struct SplitConfig {
  // The last floor(fraction * rows) rows of each series; in [0, 1).
  std::optional<double> validation_fraction = 0.2;
  // The last `steps` rows of each series; 0 or at least prediction_length.
  std::optional<std::int64_t> validation_steps;
};

// ModelConfig's hyper-parameters (defaults: ModelConfig's).
struct ModelSettings {
  std::int64_t hidden_size = ModelConfig().hidden_size;
  std::int64_t attention_heads = ModelConfig().attention_heads;
  double dropout = ModelConfig().dropout;
  // Dropout on the categorical embeddings (ModelConfig::embedding_dropout); 0: off.
  double embedding_dropout = ModelConfig().embedding_dropout;
  std::int64_t lstm_layers = ModelConfig().lstm_layers;
  std::int64_t decoder_layers = ModelConfig().decoder_layers;
  std::vector<double> quantiles = ModelConfig().quantiles;
  // Uniform by default: Center scored -0.2% to -1.1% P50 on 4 of the 6 public accuracy sets,
  // but 2-9% worse on births_states without its last 10% of rows, on every seed (BENCHMARKS.md,
  // issue 39), so it is an option, not the default.
  OutputInit output_init = ModelConfig().output_init;
  std::map<std::string, std::int64_t> unit_chunks;
  // Rows per season, for the seasonal-naive baseline every run scores (train/baselines.h);
  // 0: inferred from the time step (24 for hourly, 7 for daily, 5 for business-daily data).
  // Not a TFT hyper-parameter: the model never reads it.
  std::int64_t seasonality = 0;
};

struct LrScheduleConfig {
  LrScheduleKind kind = LrScheduleKind::ReduceOnPlateau;
  double factor = 0.5;        // in (0, 1)
  std::int64_t patience = 3;  // epochs, >= 1
  double min_lr = 1e-6;       // >= 0
  // A loss counts as better only below best * (1 - threshold) (PyTorch's relative mode);
  // in [0, 1).
  double threshold = 0.0;
  std::int64_t cooldown = 0;  // epochs after a reduction whose losses count as neither, >= 0
};

// Used only when the process is started as one rank of several (torchrun's WORLD_SIZE > 1, or
// tft-train --nproc); docs/distributed.md.
struct DistributedConfig {
  DistributedBackend backend = DistributedBackend::Auto;
  // How long a rank waits for the others (the rendezvous, every collective) before failing.
  std::int64_t timeout_seconds = 300;
};

// Quantization-aware training (docs/config.md): from start_epoch on, the model's linear layers
// train with fake-quantized weights and inputs (model/fake_quantizer.h); their observers stop
// updating after freeze_observers_epoch.
struct QatConfig {
  bool enabled = false;
  // The first epoch (1-based) whose steps observe and quantize; its first step calibrates.
  std::int64_t start_epoch = 1;
  std::int64_t weight_bits = 8;
  std::int64_t activation_bits = 8;
  // The last epoch whose steps update the observers (their scales stay fixed afterwards); 0:
  // they update until the end.
  std::int64_t freeze_observers_epoch = 0;
};

struct TrainingConfig {
  std::int64_t epochs = 20;
  std::int64_t batch_size = 64;
  double learning_rate = 1e-3;
  // Decoupled weight decay, as torch.optim.AdamW: every parameter p -= lr * weight_decay * p
  // before each Adam step (train/fused_adam.h); 0: plain Adam.
  double weight_decay = 0.0;
  // A linear warm-up of the learning rate over the run's first lr_warmup_steps steps: step k
  // (0-based, counted over the run) uses lr * (k + 1) / lr_warmup_steps, where lr is the
  // schedule's rate (train/lr_schedule.h); 0: no warm-up.
  std::int64_t lr_warmup_steps = 0;
  // Largest global gradient norm; 0 turns clipping off.
  double gradient_clip_norm = 1.0;
  LrScheduleConfig lr_schedule;
  // Epochs without a better validation loss before stopping; 0 turns early stopping off.
  std::int64_t early_stopping_patience = 10;
  // A snapshot every this many optimizer steps (counted over the run), besides the one after
  // every epoch; 0: only after epochs. A run killed mid-epoch resumes from the last one.
  std::int64_t snapshot_every_steps = 0;
  std::uint64_t seed = 42;
  // Intra-op threads; 0 leaves LibTorch's default.
  std::int64_t threads = 0;
  // "cpu", "cuda" or "cuda:<index>".
  std::string device = "cpu";
  // "32", "bf16-mixed" (CPU and CUDA) or "16-mixed" (CUDA, with loss scaling): model/precision.h.
  Precision precision = Precision::Float32;
  DistributedConfig distributed;
  QatConfig qat;
  // A refit (docs/refit.md): a saved model's folder (saved_model.h) whose weights and fitted
  // state this run starts from; empty: fresh weights. Its architecture, data schema and target
  // normaliser replace the config's; a key given with another value is an error naming it.
  // Relative paths in a YAML file resolve against the file's folder.
  std::string init_from;
  InitScalers init_scalers = InitScalers::Keep;
  InitCategories init_categories = InitCategories::Unknown;
};

// A rolling-origin backtest (tft-train backtest; train/backtest.h, docs/backtest.md).
enum class BacktestMode {
  Scratch,  // "scratch": every fold trains from fresh weights
  Refit,    // "refit": fold 1 from fresh weights, every later fold refits the fold before's model
};

struct BacktestConfig {
  // Folds: the last folds x prediction_length rows of every series, one horizon per fold.
  std::int64_t folds = 5;
  BacktestMode mode = BacktestMode::Scratch;
  // Epochs of a refitted fold (mode refit, folds 2 on); 0: training.epochs.
  std::int64_t refit_epochs = 0;
};

// How the quantile forecasts are calibrated after training (train/calibration.h).
enum class CalibrationMethod {
  None,       // "none": as the model predicts them
  Conformal,  // "conformal": each quantile shifted by a split-conformal correction fitted on
              // the validation windows
};

// Whether the forecast's median is a whole number (report/forecast_units.h).
enum class MedianRounding {
  Auto,   // "auto": whole when every value of the target in the training part is one
  Whole,  // "whole": always rounded to the nearest whole number
  None,   // "none": as the model predicts it
};

struct OutputConfig {
  // Relative paths in a YAML file resolve against the file's folder.
  std::string directory = "output";
  CalibrationMethod calibration = CalibrationMethod::Conformal;
  MedianRounding median_rounding = MedianRounding::Auto;
};

// One broken rule: `field` is the dotted key ("training.epochs", "data.known_reals[2]"),
// `message` the full text ("training.epochs: must be at least 1 (got 0)").
struct ConfigProblem {
  std::string field;
  std::string message;
};

struct TrainConfig {
  DataConfig data;
  WindowConfig windows;
  SplitConfig split;
  ModelSettings model;
  TrainingConfig training;
  CheckpointConfig checkpoint;
  OutputConfig output;
  BacktestConfig backtest;  // read by tft-train backtest only
  // The folder relative paths were resolved against (the YAML file's folder); empty when
  // the config was not loaded from a file or a base folder. Not part of the YAML.
  std::string base_dir;
  // The dotted keys a YAML file or set_config_value gave, so a refit tells a key left at its
  // default from one given (train/refit.h). Not part of the YAML, nor of equality.
  std::set<std::string> given_keys;

  // Whether `dotted_key`, or a section holding it, was given.
  bool was_given(const std::string& dotted_key) const;

  // Every rule, in one place; throws ConfigError with the message of find_problem().
  void validate() const;
  // The first broken rule, or nothing.
  std::optional<ConfigProblem> find_problem() const;
};

bool operator==(const TrainConfig& a, const TrainConfig& b);
bool operator!=(const TrainConfig& a, const TrainConfig& b);

// The model's unit names for these settings (ModelConfig::unit_names()).
std::vector<std::string> unit_names_for(const ModelSettings& model);

// The ModelConfig to build: `model` settings, lengths from `windows`, and `schema` (from the
// data: InputSchema needs the categorical cardinalities, which only the fitted encoders
// know; see TimeSeriesDataset::schema()).
ModelConfig make_model_config(const TrainConfig& config, const InputSchema& schema);

// Names of the enum values as the YAML spells them, and back (nothing when unknown).
const char* to_string(MissingValuePolicy policy);
const char* to_string(TimeFormat format);
const char* to_string(ScalingMode mode);
const char* to_string(TargetScope scope);
const char* to_string(TargetCenter center);
const char* to_string(TargetMethod method);
const char* to_string(TargetTransformation transformation);
const char* to_string(LrScheduleKind kind);
const char* to_string(InitScalers scalers);
const char* to_string(InitCategories categories);
const char* to_string(BacktestMode mode);
const char* to_string(CalibrationMethod method);
const char* to_string(MedianRounding rounding);
const char* to_string(DistributedBackend backend);

}  // namespace tft
