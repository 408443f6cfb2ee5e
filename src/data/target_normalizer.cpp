#include "data/target_normalizer.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/format.h"

namespace tft {

bool in_transformation_domain(TargetTransformation transformation, double y) {
  switch (transformation) {
    case TargetTransformation::None: return true;
    case TargetTransformation::Log:
    case TargetTransformation::Softplus: return y > 0.0;
    case TargetTransformation::Log1p: return y > -1.0;
  }
  return false;
}

const char* transformation_domain(TargetTransformation transformation) {
  switch (transformation) {
    case TargetTransformation::None: return "any value";
    case TargetTransformation::Log:
    case TargetTransformation::Softplus: return "> 0";
    case TargetTransformation::Log1p: return "> -1";
  }
  return "any value";
}

double transform_target(TargetTransformation transformation, double y) {
  switch (transformation) {
    case TargetTransformation::None: return y;
    case TargetTransformation::Log: return std::log(y);
    case TargetTransformation::Log1p: return std::log1p(y);
    case TargetTransformation::Softplus:
      // log(exp(y) - 1) = y + log(1 - exp(-y)): no overflow for large y.
      return y + std::log(-std::expm1(-y));
  }
  return y;
}

double inverse_transform_target(TargetTransformation transformation, double v) {
  switch (transformation) {
    case TargetTransformation::None: return v;
    case TargetTransformation::Log: return std::exp(v);
    case TargetTransformation::Log1p: return std::expm1(v);
    case TargetTransformation::Softplus:
      // log(1 + exp(v)) = max(v, 0) + log1p(exp(-|v|)): no overflow for large v.
      return std::max(v, 0.0) + std::log1p(std::exp(-std::fabs(v)));
  }
  return v;
}

namespace {

// The q-quantile of sorted values, interpolated linearly between the closest ranks.
double sorted_quantile(const double* sorted, std::size_t count, double q) {
  const double position = q * static_cast<double>(count - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, count - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

}  // namespace

ScalerStats fit_center_and_scale(TargetMethod method, double* values, std::size_t count) {
  ScalerStats s{0.0, 0.0};
  if (count == 0) return s;
  if (method == TargetMethod::Standard) {
    double sum = 0.0;
    for (std::size_t i = 0; i < count; ++i) sum += values[i];
    s.mean = sum / static_cast<double>(count);
    double squares = 0.0;
    for (std::size_t i = 0; i < count; ++i) squares += (values[i] - s.mean) * (values[i] - s.mean);
    s.scale = std::sqrt(squares / static_cast<double>(count));
  } else {
    std::sort(values, values + count);
    s.mean = sorted_quantile(values, count, 0.5);
    s.scale = 0.5 * (sorted_quantile(values, count, 0.75) - sorted_quantile(values, count, 0.25));
  }
  if (!(s.scale > 1e-12 * std::max(1.0, std::fabs(s.mean)))) s.scale = 0.0;
  return s;
}

double encoder_scale_floor(const ScalerStats& series_stats) { return 0.01 * series_stats.scale; }

ScalerStats fit_target_stats(const TargetNormalizerConfig& normalizer,
                             const std::vector<float>& column, const std::vector<RowRange>& parts) {
  std::vector<double> values;
  for (const RowRange& part : parts) {
    for (std::int64_t i = 0; i < part.rows; ++i) {
      values.push_back(transform_target(normalizer.transformation,
                                        column[static_cast<std::size_t>(part.offset + i)]));
    }
  }
  ScalerStats stats = fit_center_and_scale(normalizer.method, values.data(), values.size());
  if (stats.scale == 0.0) stats.scale = 1.0;  // constant: as compute_stats
  return stats;
}

StandardScaler fit_reals_scaler(ScalingMode mode, std::vector<std::string> names,
                                std::vector<std::vector<std::string>> groups,
                                const std::vector<RowRange>& parts,
                                const std::vector<std::vector<float>>& columns, std::size_t target,
                                const TargetNormalizerConfig& normalizer) {
  const auto column_stats = [&](std::size_t c, const std::vector<RowRange>& rows) {
    return c == target ? fit_target_stats(normalizer, columns[c], rows)
                       : compute_stats(columns[c], rows);
  };
  return fit_scaler(mode, std::move(names), std::move(groups), parts, column_stats);
}

ScalerStats fit_encoder_stats(const TargetNormalizerConfig& normalizer, const float* values,
                              std::size_t count, const ScalerStats& series_stats) {
  std::vector<double> transformed(count);
  for (std::size_t t = 0; t < count; ++t) {
    transformed[t] = transform_target(normalizer.transformation, values[t]);
  }
  const double last = transformed.back();  // before robust's fit sorts the values
  ScalerStats window = fit_center_and_scale(normalizer.method, transformed.data(), count);
  if (normalizer.center != TargetCenter::Statistic) window.mean = last;  // last, seasonal
  window.scale = std::max(window.scale, encoder_scale_floor(series_stats));
  if (!(window.scale > 1e-12 * std::max(1.0, std::fabs(window.mean)))) window.scale = 1.0;
  return window;
}

nlohmann::json target_normalizer_to_json(const TargetNormalizerConfig& config) {
  return nlohmann::json{{"scope", to_string(config.scope)},
                        {"center", to_string(config.center)},
                        {"method", to_string(config.method)},
                        {"transformation", to_string(config.transformation)}};
}

namespace {

template <typename E>
E enum_from_json(const nlohmann::json& json, const char* key, std::initializer_list<E> values) {
  const std::string where = std::string("data transforms: target_normalizer.") + key;
  if (!json.contains(key) || !json[key].is_string()) {
    throw DataError(where + ": expected a string");
  }
  const std::string name = json[key].get<std::string>();
  std::string expected;
  for (E e : values) {
    if (name == to_string(e)) return e;
    expected += (expected.empty() ? "" : ", ") + std::string(to_string(e));
  }
  throw DataError(where + ": unknown value " + show_string(name) +
                  " (expected one of: " + expected + ")");
}

}  // namespace

TargetNormalizerConfig target_normalizer_from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw DataError("data transforms: target_normalizer: expected an object");
  TargetNormalizerConfig config;
  config.scope = enum_from_json(json, "scope", {TargetScope::Series, TargetScope::Encoder});
  config.center = enum_from_json(
      json, "center", {TargetCenter::Statistic, TargetCenter::Last, TargetCenter::Seasonal});
  config.method = enum_from_json(json, "method", {TargetMethod::Standard, TargetMethod::Robust});
  config.transformation =
      enum_from_json(json, "transformation",
                     {TargetTransformation::None, TargetTransformation::Log,
                      TargetTransformation::Log1p, TargetTransformation::Softplus});
  return config;
}

}  // namespace tft
