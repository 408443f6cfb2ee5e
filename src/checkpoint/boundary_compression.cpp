#include "checkpoint/boundary_compression.h"

#include <c10/util/Exception.h>

#include <limits>

namespace tft::checkpoint {
namespace {

int64_t compressed_item_size(BoundaryDtype dtype) {
  switch (dtype) {
    case BoundaryDtype::kBFloat16: return 2;
    case BoundaryDtype::kInt8: return 1;
    case BoundaryDtype::kFloat32: break;
  }
  return 4;
}

int64_t channels_of(const at::Tensor& t) { return t.dim() == 0 ? 1 : t.size(-1); }

}  // namespace

bool compresses(const at::Tensor& input, BoundaryDtype dtype) {
  return dtype != BoundaryDtype::kFloat32 && input.defined() && input.requires_grad() &&
         input.numel() > 0 && at::isFloatingType(input.scalar_type()) &&
         static_cast<int64_t>(input.element_size()) > compressed_item_size(dtype);
}

CompressedTensor compress(const at::Tensor& input, BoundaryDtype dtype) {
  TORCH_CHECK(compresses(input, dtype), "tft::checkpoint: cannot compress this boundary as ",
              boundary_dtype_name(dtype));
  // Compression is not part of the graph: it is storage, like save_for_backward.
  const at::Tensor x = input.detach();
  CompressedTensor kept;
  if (dtype == BoundaryDtype::kBFloat16) {
    kept.payload = x.to(at::kBFloat16).contiguous();
    return kept;
  }
  // amax and amin rather than abs().amax(): no full-size temporary just for the range.
  const at::Tensor rows = x.reshape({-1, channels_of(x)});
  const at::Tensor range = rows.amax(0).maximum(rows.amin(0).neg());
  // The scales in float32 at least: a bfloat16 activation (bf16-mixed) gets float32 scales,
  // not scales rounded to 8 significant bits.
  kept.scales = (range.to(c10::promoteTypes(range.scalar_type(), at::kFloat)) / 127.0)
                    .clamp_min_(std::numeric_limits<float>::min());
  kept.payload = rows.div(kept.scales).round_().clamp_(-127, 127).to(at::kChar).view(x.sizes());
  return kept;
}

at::Tensor decompress(const CompressedTensor& kept, c10::ScalarType dtype) {
  if (!kept.scales.defined()) return kept.payload.to(dtype);
  const at::Tensor rows = kept.payload.reshape({-1, kept.scales.size(0)});
  return rows.to(dtype).mul_(kept.scales).view(kept.payload.sizes());
}

CompressedTensor BoundaryCache::compress(const at::Tensor& input, BoundaryDtype dtype) {
  const c10::TensorImpl* key = input.unsafeGetTensorImpl();
  const auto found = entries_.find(key);
  if (found != entries_.end() && !found->second.tensor.expired() &&
      found->second.version == input._version() && found->second.dtype == dtype) {
    return found->second.kept;
  }
  Entry entry{
      c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>(input.getIntrusivePtr()),
      input._version(), dtype, checkpoint::compress(input, dtype)};
  CompressedTensor kept = entry.kept;
  entries_.insert_or_assign(key, std::move(entry));
  return kept;
}

}  // namespace tft::checkpoint
