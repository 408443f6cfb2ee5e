// The features a dataset derives instead of reading them (config/train_config.h,
// derived_feature_names): calendar features of the time column (day_of_week, month,
// day_of_month, hour) and the window position relative_time_idx.
#pragma once

#include <string>
#include <vector>

#include "readers/iso8601.h"

namespace tft {

enum class DerivedFeature { None, DayOfWeek, Month, DayOfMonth, Hour, RelativeTimeIdx };

// The derived feature of that name, or None.
DerivedFeature derived_feature(const std::string& name);

// Whether `feature` is one computed from the time column (not None or RelativeTimeIdx).
bool is_calendar_feature(DerivedFeature feature);

// The value range of a calendar feature: day_of_week 0-6 (Monday 0), month 1-12,
// day_of_month 1-31, hour 0-23.
int calendar_low(DerivedFeature feature);
int calendar_high(DerivedFeature feature);

// A calendar feature of a time's fields (0 for the others).
int calendar_value(DerivedFeature feature, const DateTimeFields& fields);

// The fixed vocabulary of a calendar categorical: every value of its range, in numeric order,
// so codes do not depend on which values the training part happens to contain.
std::vector<std::string> calendar_domain(DerivedFeature feature);

}  // namespace tft
