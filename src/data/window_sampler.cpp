#include "data/window_sampler.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/error.h"

namespace tft {

bool operator==(const Window& a, const Window& b) {
  return a.series == b.series && a.start == b.start;
}
bool operator!=(const Window& a, const Window& b) { return !(a == b); }

std::int64_t validation_rows(std::int64_t length, const SplitConfig& split) {
  if (split.validation_steps) return std::min(*split.validation_steps, length);
  if (split.validation_fraction) {
    return static_cast<std::int64_t>(
        std::floor(*split.validation_fraction * static_cast<double>(length)));
  }
  return 0;
}

void append_series_windows(std::uint32_t series, std::int64_t length, std::int64_t train_rows,
                           const WindowConfig& windows, std::vector<Window>& training,
                           std::vector<Window>& validation) {
  const std::int64_t span = windows.encoder_length + windows.prediction_length;
  const std::int64_t stride = windows.stride;
  for (std::int64_t start = 0; start + span <= train_rows; start += stride) {
    training.push_back(Window{series, static_cast<std::uint32_t>(start)});
  }
  if (train_rows >= length) return;  // no validation part
  for (std::int64_t start = std::max<std::int64_t>(0, train_rows - windows.encoder_length);
       start + span <= length; start += stride) {
    validation.push_back(Window{series, static_cast<std::uint32_t>(start)});
  }
}

std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t bound) {
  // Values below `threshold` would make some results more likely; 2^64 mod bound of them.
  const std::uint64_t threshold = (0 - bound) % bound;
  while (true) {
    const std::uint64_t r = rng();
    if (r >= threshold) return r % bound;
  }
}

WindowSampler::WindowSampler(std::vector<Window> windows, std::int64_t batch_size, bool shuffle,
                             std::uint64_t seed)
    : windows_(std::move(windows)),
      batch_size_(batch_size > 0 ? static_cast<std::size_t>(batch_size) : 0),
      shuffle_(shuffle),
      seed_(seed) {
  if (batch_size < 1) {
    throw ConfigError("training.batch_size: must be at least 1 (got " + std::to_string(batch_size) +
                      ")");
  }
}

std::size_t WindowSampler::num_batches() const {
  return (windows_.size() + batch_size_ - 1) / batch_size_;
}

std::vector<Window> WindowSampler::epoch_order(std::uint64_t epoch) const {
  std::vector<Window> order = windows_;
  if (!shuffle_) return order;
  // seed_seq's mixing is specified by the standard, so the stream is the same everywhere.
  std::seed_seq seq{static_cast<std::uint32_t>(seed_), static_cast<std::uint32_t>(seed_ >> 32),
                    static_cast<std::uint32_t>(epoch), static_cast<std::uint32_t>(epoch >> 32)};
  std::mt19937_64 rng(seq);
  deterministic_shuffle(order, rng);
  return order;
}

void thin_evenly(std::vector<Window>& windows, std::size_t limit) {
  if (windows.size() <= limit) return;
  std::vector<Window> kept;
  kept.reserve(limit);
  for (std::size_t i = 0; i < limit; ++i) kept.push_back(windows[i * windows.size() / limit]);
  windows = std::move(kept);
}

std::vector<std::vector<Window>> cut_into_batches(const std::vector<Window>& windows,
                                                  std::size_t batch_size) {
  std::vector<std::vector<Window>> batches;
  batches.reserve((windows.size() + batch_size - 1) / batch_size);
  for (std::size_t i = 0; i < windows.size(); i += batch_size) {
    const std::size_t end = std::min(windows.size(), i + batch_size);
    batches.emplace_back(windows.begin() + static_cast<std::ptrdiff_t>(i),
                         windows.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return batches;
}

std::vector<std::vector<Window>> WindowSampler::epoch_batches(std::uint64_t epoch) const {
  return cut_into_batches(epoch_order(epoch), batch_size_);
}

}  // namespace tft
