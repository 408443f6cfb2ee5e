// tft_data_*: a table handed over as an Arrow C stream (data/arrow_data.h), and the trainer and
// model functions that read it.
#include "data_handle.h"

#include "common/error.h"

using tft::capi::live;
using tft::capi::require;

namespace {

// The caller's stream, taken over at once (the caller's struct is marked released): released
// here exactly once, unless Arrow's importer took it over in turn (and released it itself).
class TakenStream {
 public:
  explicit TakenStream(ArrowArrayStream* from) : stream_(*from) { from->release = nullptr; }
  ~TakenStream() {
    if (stream_.release != nullptr) stream_.release(&stream_);
  }
  TakenStream(const TakenStream&) = delete;
  TakenStream& operator=(const TakenStream&) = delete;
  ArrowArrayStream* get() { return &stream_; }

 private:
  ArrowArrayStream stream_;
};

}  // namespace

namespace tft::capi {

TimeSeriesDataset load_data(const tft_data* data, const char* function, const TrainConfig& config,
                            const DataTransforms* fitted) {
  const tft_data* handle = live(data, function, "data");
  return TimeSeriesDataset::from_source(*handle->data->rows(), config, fitted);
}

}  // namespace tft::capi

extern "C" {

tft_status tft_data_create_from_arrow_stream(ArrowArrayStream* stream, tft_data** out) {
  TFT_API_BEGIN
  require(stream, __func__, "stream");
  if (stream->release == nullptr) {
    throw tft::InvalidArgumentError(std::string(__func__) +
                                    ": 'stream' is released already (its release is NULL): a "
                                    "stream can be handed over once");
  }
  TakenStream taken(stream);
  require(out, __func__, "out");
  auto handle = std::make_unique<tft_data>();
  handle->data = tft::ArrowData::read(taken.get(), "arrow stream");
  *out = tft::capi::publish(std::move(handle));
  TFT_API_END
}

void tft_data_free(tft_data* data) { tft::capi::destroy(data); }

tft_status tft_data_get_num_rows(const tft_data* data, int64_t* out) {
  TFT_API_BEGIN
  const tft_data* handle = live(data, __func__, "data");
  require(out, __func__, "out");
  *out = handle->data->num_rows();
  TFT_API_END
}

}  // extern "C"
