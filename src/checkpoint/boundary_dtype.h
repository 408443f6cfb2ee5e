// How a checkpointed segment keeps its inputs (its boundary tensors) until backward: as they
// are (float32), in bfloat16, or int8 with one float scale per channel of the last dimension.
// With every unit checkpointed these boundaries are most of what stays in memory between the
// forward pass and the recompute; compressing them trades exact gradients for memory (the
// recompute starts from the decompressed values, so gradients are no longer bitwise equal to
// an un-checkpointed run; the forward pass and the loss are unchanged).
//
// This file is the setting alone (no LibTorch): its names and what it costs per element, for
// the config, the planner and the reports. checkpoint/boundary_compression.h does the work.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tft {

enum class BoundaryDtype { kFloat32, kBFloat16, kInt8 };

// "float32", "bfloat16", "int8": the schema's `boundary_dtype` values.
std::string boundary_dtype_name(BoundaryDtype dtype);
std::optional<BoundaryDtype> parse_boundary_dtype(std::string_view name);
// The accepted names, for error messages: "float32, bfloat16 or int8".
const char* boundary_dtype_choices();

// Bytes a float32 boundary of `elements` elements whose last dimension has `channels` entries
// takes when kept as `dtype`: 4 per element, 2 per element, or 1 per element plus a float
// scale per channel. The planner's and the report's model of a compressed boundary.
std::int64_t boundary_bytes(BoundaryDtype dtype, std::int64_t elements, std::int64_t channels);

}  // namespace tft
