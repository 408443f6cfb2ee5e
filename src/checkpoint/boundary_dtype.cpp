#include "checkpoint/boundary_dtype.h"

namespace tft {

std::string boundary_dtype_name(BoundaryDtype dtype) {
  switch (dtype) {
    case BoundaryDtype::kBFloat16: return "bfloat16";
    case BoundaryDtype::kInt8: return "int8";
    case BoundaryDtype::kFloat32: break;
  }
  return "float32";
}

std::optional<BoundaryDtype> parse_boundary_dtype(std::string_view name) {
  for (const BoundaryDtype dtype :
       {BoundaryDtype::kFloat32, BoundaryDtype::kBFloat16, BoundaryDtype::kInt8}) {
    if (name == boundary_dtype_name(dtype)) return dtype;
  }
  return std::nullopt;
}

const char* boundary_dtype_choices() { return "float32, bfloat16 or int8"; }

std::int64_t boundary_bytes(BoundaryDtype dtype, std::int64_t elements, std::int64_t channels) {
  switch (dtype) {
    case BoundaryDtype::kBFloat16: return 2 * elements;
    case BoundaryDtype::kInt8: return elements + 4 * channels;
    case BoundaryDtype::kFloat32: break;
  }
  return 4 * elements;
}

}  // namespace tft
