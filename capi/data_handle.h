// The tft_data handle: a table handed over as an Arrow C stream, read whole (arrow_data.h).
#pragma once

#include "api_guard.h"

#include <memory>

#include "config/train_config.h"
#include "data/time_series_dataset.h"
#include "readers/arrow_data.h"

struct tft_data {
  static constexpr std::uint64_t kMagic = 0x74667464617461ULL;  // "tftdata"
  static constexpr const char* kTypeName = "tft_data";
  std::shared_ptr<const tft::ArrowData> data;
};

namespace tft::capi {

// The dataset of a live data handle (InvalidArgumentError naming `function` otherwise), read
// with `config`, with transforms fitted before or (fitted NULL) fitted here.
TimeSeriesDataset load_data(const tft_data* data, const char* function, const TrainConfig& config,
                            const DataTransforms* fitted = nullptr);

}  // namespace tft::capi
