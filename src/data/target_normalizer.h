// The target's normalisation (data.target_normalizer, config/train_config.h): a monotone
// transformation T, then a center and a scale, fitted on a series' training part (scope
// series) or on each window's encoder steps (scope encoder; the center may be the last
// encoder value instead of the mean or median). The model sees and predicts
//   z = (T(y) - center) / scale
// and a forecast z goes back to original units as T^-1(z * scale + center). T is monotone, so
// a quantile of z maps to the same quantile of y.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/train_config.h"
#include "data/row_range.h"
#include "data/scaler.h"

namespace tft {

// Whether T is defined at y (none: always; log, softplus: y > 0; log1p: y > -1).
bool in_transformation_domain(TargetTransformation transformation, double y);
// The domain as a rule for messages: "> 0", "> -1", or "any value".
const char* transformation_domain(TargetTransformation transformation);

// T(y); requires in_transformation_domain.
double transform_target(TargetTransformation transformation, double y);
// T^-1(v): exp, expm1, softplus; defined for every v.
double inverse_transform_target(TargetTransformation transformation, double v);

// Center and scale of `count` values (already transformed): mean and population standard
// deviation (standard), or median and half the interquartile range (robust; quantiles by
// linear interpolation, as numpy's default). Sorts `values` for robust. A scale below
// 1e-12 * max(1, |center|) is returned as 0: the caller decides the floor. count == 0 gives
// {0, 0}.
ScalerStats fit_center_and_scale(TargetMethod method, double* values, std::size_t count);

// The smallest scale an encoder window gets, from the series' fitted scale: a window whose
// history is (nearly) flat would otherwise blow its targets up by 1 / scale.
double encoder_scale_floor(const ScalerStats& series_stats);

// The statistics of a series' target fitted on its training part: the center and scale of
// the transformed values of `column`'s rows in `parts` (taken in that order) by the method,
// with scale 1 where it is 0 (a constant target).
ScalerStats fit_target_stats(const TargetNormalizerConfig& normalizer,
                             const std::vector<float>& column, const std::vector<RowRange>& parts);

// The statistics of one window (scope encoder) from its `count` encoder values: the center
// and scale of the transformed values (the center the last one with center last), the scale
// at least encoder_scale_floor(series_stats), and 1 where the window is flat.
ScalerStats fit_encoder_stats(const TargetNormalizerConfig& normalizer, const float* values,
                              std::size_t count, const ScalerStats& series_stats);

// The scaler of the time-varying reals `columns` (named `names`; data.scaling's `mode`),
// fitted on the series' `parts` (`groups` their group values): column `target` by the
// normaliser (fit_target_stats), the others by compute_stats.
StandardScaler fit_reals_scaler(ScalingMode mode, std::vector<std::string> names,
                                std::vector<std::vector<std::string>> groups,
                                const std::vector<RowRange>& parts,
                                const std::vector<std::vector<float>>& columns, std::size_t target,
                                const TargetNormalizerConfig& normalizer);

// {"scope": "encoder", "center": "last", "method": "standard", "transformation": "none"}
nlohmann::json target_normalizer_to_json(const TargetNormalizerConfig& config);
// DataError naming the key and the value when the JSON is not such an object.
TargetNormalizerConfig target_normalizer_from_json(const nlohmann::json& json);

}  // namespace tft
