// Compressing a checkpointed segment's saved inputs (boundary_dtype.h says what and why).
//
// bfloat16 keeps 8 significant bits of each value (relative error <= 2^-8, half an ulp).
// int8 is symmetric per channel of the last dimension (the hidden units): scale[c] =
// max |x[..., c]| / 127 over every other dimension, q = round(x / scale) in [-127, 127], so an
// element errs by at most scale[c] / 2; the scales cost one float per channel, not per row.
#pragma once

#include "checkpoint/boundary_dtype.h"

#include <ATen/core/Tensor.h>
#include <c10/core/UndefinedTensorImpl.h>
#include <c10/util/intrusive_ptr.h>

#include <cstdint>
#include <unordered_map>

namespace tft::checkpoint {

// What a segment keeps of one input in place of the input itself.
struct CompressedTensor {
  at::Tensor payload;  // bfloat16 or int8, the input's shape (contiguous)
  at::Tensor scales;   // int8 only: [channels] in the input's dtype; undefined otherwise
};

// Whether `input` is kept compressed under `dtype`: a non-empty floating-point tensor wider
// than the compressed form that requires grad, i.e. an activation handed over by an earlier
// part of the graph. An input that does not require grad (batch data, a buffer) is held by its
// owner anyway: a compressed copy beside it would add memory, not save it.
bool compresses(const at::Tensor& input, BoundaryDtype dtype);

// Requires compresses(input, dtype).
CompressedTensor compress(const at::Tensor& input, BoundaryDtype dtype);

// A fresh tensor of `dtype` (the input's) with the input's shape.
at::Tensor decompress(const CompressedTensor& kept, c10::ScalarType dtype);

// The compressed copies made during one forward pass, shared by every segment that keeps the
// same tensor. Many do: every query chunk of an attention block keeps all the key and value
// pieces before it, every chunk of a unit its static context. A copy per segment would keep
// several copies of one tensor where save_for_backward keeps the tensor once (measured on the
// reference config with 8 attention chunks: int8 boundaries kept 27 MiB instead of 8).
// Entries hold their tensor weakly, so the cache keeps no original alive and a freed tensor's
// address is never mistaken for a new one's.
class BoundaryCache {
 public:
  // compress(input, dtype), or the copy made earlier of this very tensor at this version.
  CompressedTensor compress(const at::Tensor& input, BoundaryDtype dtype);

 private:
  struct Entry {
    c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl> tensor;
    std::int64_t version = 0;
    BoundaryDtype dtype = BoundaryDtype::kFloat32;
    CompressedTensor kept;
  };
  std::unordered_map<const c10::TensorImpl*, Entry> entries_;
};

}  // namespace tft::checkpoint
