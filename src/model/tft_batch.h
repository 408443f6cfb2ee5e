// The model's inputs for one batch (TFTModel::forward, model/tft_model.h), in a header of its
// own so that data (data/batch.h) can fill it without the model's blocks.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace tft {

// One batch. Absent groups (no variables of that kind) are undefined tensors or have a last
// dimension of 0. Column order follows InputSchema:
//   static_reals          [B, n_sr]          float   static_reals
//   static_categoricals   [B, n_sc]          int64   static_categoricals
//   encoder_reals         [B, T_enc, n_er]   float   unknown_reals, known_reals, target
//   encoder_categoricals  [B, T_enc, n_ec]   int64   unknown_categoricals, known_categoricals
//   decoder_reals         [B, T_dec, n_dr]   float   known_reals
//   decoder_categoricals  [B, T_dec, n_dc]   int64   known_categoricals
struct TFTBatch {
  torch::Tensor static_reals;
  torch::Tensor static_categoricals;
  torch::Tensor encoder_reals;
  torch::Tensor encoder_categoricals;
  torch::Tensor decoder_reals;
  torch::Tensor decoder_categoricals;
};

// The first `rows` rows of every tensor of `batch` (views; undefined tensors stay undefined):
// a smaller batch of the same shape otherwise, as the budget planner measures one.
inline TFTBatch leading_rows(const TFTBatch& batch, std::int64_t rows) {
  const auto cut = [rows](const torch::Tensor& t) {
    return t.defined() && t.dim() > 0 ? t.slice(0, 0, rows) : t;
  };
  return TFTBatch{cut(batch.static_reals),  cut(batch.static_categoricals),
                  cut(batch.encoder_reals), cut(batch.encoder_categoricals),
                  cut(batch.decoder_reals), cut(batch.decoder_categoricals)};
}

}  // namespace tft
