// Fuzz target: an Arrow IPC stream, decoded by Arrow C++ (RecordBatchStreamReader), handed
// over as an Arrow C stream (ArrowArrayStream) to the C API (tft_data_create_from_arrow_stream)
// and to the dataset builder (tft::ArrowData::read, then TimeSeriesDataset::from_source) with
// a small fixed schema: series by `g`, time `t`, target `y`, a static real `z`, a known real
// `x`, a known categorical `c`, an unknown real `u`, missing values forward-filled.
//
// Bytes that do not start with an IPC stream's schema are skipped. A batch that fails to
// decode, or is not a well-formed array (RecordBatch::ValidateFull), reaches the library as a
// stream whose get_next fails: the C interface carries no buffer sizes, so a consumer has to
// trust the producer's arrays to be well formed, and the harness is the producer. The decoder
// aligns every buffer to its type (a producer should; the spec recommends it), so the inputs
// explore values and layouts, not alignment.
//
// The stream handed over counts its release calls. Contract checked, besides the sanitizers:
// the library takes the stream over (the caller's struct is marked released) and calls its
// release exactly once, before it returns, whether it accepts the data or not; a released
// stream is refused with INVALID_ARGUMENT and nothing of it is called; anything rejected is a
// DATA (tft::DataError) or CONFIG (tft::ConfigError) error, never INTERNAL or another
// exception; the C API and the core agree on whether the stream reads and on its row count.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include <arrow/buffer.h>
#include <arrow/c/bridge.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/options.h>
#include <arrow/ipc/reader.h>
#include <arrow/record_batch.h>
#include <arrow/status.h>

#include "common/error.h"
#include "config/train_config.h"
#include "config/train_config_io.h"
#include "data/time_series_dataset.h"
#include "fuzz_support.h"
#include "readers/arrow_data.h"
#include "tftrain.h"

namespace {

using tft::fuzz::broken_contract;

constexpr const char* kConfigYaml = R"(
data:
  path: fuzz.arrow  # not read: the rows come from the stream
  time_column: t
  group_columns: [g]
  target: y
  static_reals: [z]
  known_reals: [x, relative_time_idx]
  known_categoricals: [{name: c, embedding_dim: 2}]
  unknown_reals: [u]
  missing_values: forward_fill
windows: {encoder_length: 2, prediction_length: 1}
split: {validation_steps: 1}
)";

const tft::TrainConfig& config() {
  static const tft::TrainConfig c = [] {
    tft::TrainConfig loaded = tft::load_train_config_string(kConfigYaml);
    loaded.validate();  // a broken fixture is the harness's bug: it throws out of the harness
    return loaded;
  }();
  return c;
}

// The decoded stream, wrapped so that its release calls are counted (private_data).
struct CountedStream {
  ArrowArrayStream inner{};
  int releases = 0;

  static ArrowArrayStream* inner_of(ArrowArrayStream* s) {
    auto* self = static_cast<CountedStream*>(s->private_data);
    if (self->releases > 0) broken_contract("a released stream was called");
    return &self->inner;
  }
  static int get_schema(ArrowArrayStream* s, ArrowSchema* out) {
    ArrowArrayStream* in = inner_of(s);
    return in->get_schema(in, out);
  }
  static int get_next(ArrowArrayStream* s, ArrowArray* out) {
    ArrowArrayStream* in = inner_of(s);
    return in->get_next(in, out);
  }
  static const char* get_last_error(ArrowArrayStream* s) {
    ArrowArrayStream* in = inner_of(s);
    return in->get_last_error(in);
  }
  static void release(ArrowArrayStream* s) {
    auto* self = static_cast<CountedStream*>(s->private_data);
    if (++self->releases > 1) broken_contract("the stream was released twice");
    self->inner.release(&self->inner);
    s->release = nullptr;
  }

  // The struct handed over: callbacks forward to `inner` while it is not released.
  ArrowArrayStream outer() {
    ArrowArrayStream s{};
    s.get_schema = get_schema;
    s.get_next = get_next;
    s.get_last_error = get_last_error;
    s.release = release;
    s.private_data = this;
    return s;
  }

  ~CountedStream() {
    if (releases == 0 && inner.release != nullptr) inner.release(&inner);
  }
};

// The decoded batches, each validated whole before it is handed over; one that fails makes
// the stream's get_next fail with Arrow's message. The IPC reader does not validate by itself,
// and Arrow's importer infers, for example, a string column's data size from its last offset.
class ValidatingReader final : public arrow::RecordBatchReader {
 public:
  explicit ValidatingReader(std::shared_ptr<arrow::RecordBatchReader> decoded)
      : decoded_(std::move(decoded)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return decoded_->schema(); }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    ARROW_RETURN_NOT_OK(decoded_->ReadNext(batch));
    if (*batch != nullptr) return (*batch)->ValidateFull();
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> decoded_;
};

// Decodes the bytes as an IPC stream into `counted`; false when they do not start with one.
bool decode(const std::shared_ptr<arrow::Buffer>& bytes, CountedStream& counted) {
  auto options = arrow::ipc::IpcReadOptions::Defaults();
  options.use_threads = false;
  options.ensure_alignment = arrow::ipc::Alignment::kDataTypeSpecificAlignment;
  auto reader = arrow::ipc::RecordBatchStreamReader::Open(
      std::make_shared<arrow::io::BufferReader>(bytes), options);
  if (!reader.ok()) return false;
  auto validating = std::make_shared<ValidatingReader>(*std::move(reader));
  if (!arrow::ExportRecordBatchReader(validating, &counted.inner).ok()) {
    broken_contract("Arrow could not export a reader it opened");
  }
  return true;
}

void expect_released_once(const CountedStream& counted, const ArrowArrayStream& handed,
                          const char* path) {
  if (handed.release != nullptr) {
    broken_contract(std::string(path) + ": the caller's stream is not marked released");
  }
  if (counted.releases != 1) {
    broken_contract(std::string(path) + ": the stream was released " +
                    std::to_string(counted.releases) + " times before the call returned");
  }
}

// Through the C API: the row count, or -1 when the data was rejected.
std::int64_t read_through_capi(const std::shared_ptr<arrow::Buffer>& bytes) {
  CountedStream counted;
  if (!decode(bytes, counted)) return -2;
  ArrowArrayStream handed = counted.outer();
  tft_data* data = nullptr;
  const tft_status status = tft_data_create_from_arrow_stream(&handed, &data);
  expect_released_once(counted, handed, "tft_data_create_from_arrow_stream");
  std::int64_t rows = -1;
  if (status == TFT_OK) {
    if (tft_data_get_num_rows(data, &rows) != TFT_OK || rows <= 0) {
      broken_contract("a tft_data without rows: " + std::to_string(rows));
    }
  } else if (status != TFT_ERROR_DATA) {
    broken_contract("tft_data_create_from_arrow_stream returned " + std::to_string(status) + ": " +
                    tft_last_error());
  }
  tft_data_free(data);
  // The same struct again: released, so refused, and nothing of it is called.
  tft_data* again = nullptr;
  if (tft_data_create_from_arrow_stream(&handed, &again) != TFT_ERROR_INVALID_ARGUMENT ||
      again != nullptr || counted.releases != 1) {
    broken_contract("a released stream was not refused with INVALID_ARGUMENT");
  }
  return rows;
}

// Through the core, on to the dataset: the row count, or -1 when the stream was rejected.
std::int64_t read_through_core(const std::shared_ptr<arrow::Buffer>& bytes) {
  CountedStream counted;
  if (!decode(bytes, counted)) return -2;
  ArrowArrayStream handed = counted.outer();
  std::shared_ptr<const tft::ArrowData> data;
  try {
    data = tft::ArrowData::read(&handed, "fuzz");
  } catch (const tft::DataError&) {
    expect_released_once(counted, handed, "ArrowData::read (rejected)");
    return -1;
  }
  expect_released_once(counted, handed, "ArrowData::read");
  try {
    const tft::TimeSeriesDataset dataset =
        tft::TimeSeriesDataset::from_source(*data->rows(), config());
    if (!dataset.times().empty()) {
      dataset.format_time(dataset.times().front());
      dataset.format_time(dataset.times().back());
    }
    // Twice from the same data: a run reads its rows as often as it needs.
    const tft::TimeSeriesDataset again =
        tft::TimeSeriesDataset::from_source(*data->rows(), config(), &dataset.transforms());
    if (again.series().size() != dataset.series().size() ||
        again.training_windows() != dataset.training_windows() ||
        again.validation_windows() != dataset.validation_windows()) {
      broken_contract("the same stream loads differently a second time");
    }
  } catch (const tft::DataError&) {
  } catch (const tft::ConfigError&) {
  }
  return data->num_rows();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A copy the reader may keep slices of (zero-copy) after this call's input is gone.
  auto bytes = arrow::AllocateBuffer(static_cast<std::int64_t>(size));
  if (!bytes.ok()) return 0;
  std::shared_ptr<arrow::Buffer> buffer = std::move(*bytes);
  if (size > 0) std::memcpy(buffer->mutable_data(), data, size);

  const std::int64_t capi_rows = read_through_capi(buffer);
  if (capi_rows == -2) return 0;  // not an IPC stream
  const std::int64_t core_rows = read_through_core(buffer);
  if (capi_rows != core_rows) {
    broken_contract("the C API read " + std::to_string(capi_rows) + " rows, the core " +
                    std::to_string(core_rows) + " (-1: rejected)");
  }
  return 0;
}
