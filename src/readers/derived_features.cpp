#include "readers/derived_features.h"

namespace tft {

DerivedFeature derived_feature(const std::string& name) {
  if (name == "day_of_week") return DerivedFeature::DayOfWeek;
  if (name == "month") return DerivedFeature::Month;
  if (name == "day_of_month") return DerivedFeature::DayOfMonth;
  if (name == "hour") return DerivedFeature::Hour;
  if (name == "relative_time_idx") return DerivedFeature::RelativeTimeIdx;
  return DerivedFeature::None;
}

bool is_calendar_feature(DerivedFeature feature) {
  return feature != DerivedFeature::None && feature != DerivedFeature::RelativeTimeIdx;
}

int calendar_low(DerivedFeature feature) {
  return feature == DerivedFeature::Month || feature == DerivedFeature::DayOfMonth ? 1 : 0;
}

int calendar_high(DerivedFeature feature) {
  switch (feature) {
    case DerivedFeature::DayOfWeek: return 6;
    case DerivedFeature::Month: return 12;
    case DerivedFeature::DayOfMonth: return 31;
    case DerivedFeature::Hour: return 23;
    default: return 0;
  }
}

int calendar_value(DerivedFeature feature, const DateTimeFields& fields) {
  switch (feature) {
    case DerivedFeature::DayOfWeek: return day_of_week(fields.year, fields.month, fields.day);
    case DerivedFeature::Month: return fields.month;
    case DerivedFeature::DayOfMonth: return fields.day;
    case DerivedFeature::Hour: return fields.hour;
    default: return 0;
  }
}

std::vector<std::string> calendar_domain(DerivedFeature feature) {
  std::vector<std::string> values;
  for (int v = calendar_low(feature); v <= calendar_high(feature); ++v) {
    values.push_back(std::to_string(v));
  }
  return values;
}

}  // namespace tft
