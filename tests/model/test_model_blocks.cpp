// The TFT's building blocks on their own: shapes, the properties the paper relies on
// (selection weights and attention rows are distributions, attention is causal), the pinball
// loss, and the segment runner that units are built from.
#include "model/attention_block.h"
#include "model/grn.h"
#include "model/input_embedding.h"
#include "model/interpretable_attention.h"
#include "model/quantile_loss.h"
#include "model/segment.h"
#include "model/static_covariate_encoder.h"
#include "model/variable_selection.h"
#include "nn/dropout.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/nn/modules/rnn.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdio>
#include <limits>

#include "support/cmocka_cpp.h"  // last: see the header

using tft::checkpoint::TensorVector;

namespace {

double max_abs(const torch::Tensor& t) { return t.abs().max().item<double>(); }

}  // namespace

TFT_TEST(split_span_covers_the_range_evenly) {
  auto spans = tft::split_span(3, 13, 4);  // 10 steps: 3, 3, 2, 2
  assert_int_equal(spans.size(), 4);
  assert_int_equal(spans[0].begin, 3);
  assert_int_equal(spans[0].length(), 3);
  assert_int_equal(spans[1].length(), 3);
  assert_int_equal(spans[2].length(), 2);
  assert_int_equal(spans[3].end, 13);
  assert_int_equal(tft::split_span(0, 3, 8).size(), 3);  // clamped to the length
  assert_int_equal(tft::split_span(5, 5, 2).size(), 0);
}

TFT_TEST(dropout_masks_keep_the_right_share_and_repeat_with_the_generator) {
  tft::Dropout dropout(0.25);
  const auto x = torch::ones({257, 129});  // not a multiple of Philox's four numbers
  torch::manual_seed(7);
  const auto first = dropout(x);
  // Kept values are scaled by 1 / (1 - p); the share kept is 0.75 within sampling error
  // (33153 draws: standard error 0.0024).
  const auto kept = (first != 0).to(torch::kDouble).mean().item<double>();
  assert_true(kept > 0.74 && kept < 0.76);
  assert_true(max_abs(first.masked_select(first != 0) - 1.0 / 0.75) < 1e-6);
  // The same generator state gives the same mask (what a checkpoint's recompute relies
  // on); the next call a different one.
  torch::manual_seed(7);
  assert_true(torch::equal(dropout(x), first));
  assert_false(torch::equal(dropout(x), first));
  // The mask does not depend on how many threads draw it.
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  torch::manual_seed(7);
  const auto single = dropout(x);
  at::set_num_threads(threads);
  assert_true(torch::equal(single, first));
  // Backward multiplies by the same mask; eval mode and p = 0 pass x through.
  torch::manual_seed(7);
  const auto leaf = torch::ones({257, 129}, torch::requires_grad());
  dropout(leaf).sum().backward();
  assert_true(torch::equal(leaf.grad(), first));
  // Backward draws the mask again from the forward's seed (autograd keeps no mask): other
  // draws in between and a non-contiguous input change nothing.
  const auto wide = torch::randn({129, 257}).requires_grad_(true);
  const auto weight = torch::randn({257, 129});
  torch::manual_seed(7);
  const auto out = dropout(wide.t());
  (void)dropout(x);
  (out * weight).sum().backward();
  assert_true(torch::equal(wide.grad().t(), weight * first));
  dropout->eval();
  assert_true(dropout(x).is_same(x));
  tft::Dropout none(0.0);
  assert_true(none(x).is_same(x));
  TFT_ASSERT_THROWS_WITH(tft::Dropout(1.0), c10::Error, "p must be in [0, 1)");
}

TFT_TEST(grn_shapes_and_context) {
  torch::manual_seed(0);
  tft::GatedResidualNetwork plain(8, 16, 8, 0.1);
  tft::GatedResidualNetwork resized(8, 16, 4, 0.1, /*context_size=*/6);
  assert_false(plain->has_context());
  assert_true(resized->has_context());
  auto x = torch::randn({3, 5, 8});
  assert_true(plain(x).sizes() == torch::IntArrayRef({3, 5, 8}));
  auto c = torch::randn({3, 6});
  auto y = resized(x, c);
  assert_true(y.sizes() == torch::IntArrayRef({3, 5, 4}));
  // The context changes the output (it is broadcast over time, not ignored).
  resized->eval();
  assert_true(max_abs(resized(x, c) - resized(x, c * 2)) > 0);
  TFT_ASSERT_THROWS_WITH(plain(x, c), c10::Error, "context");
}

TFT_TEST(embedding_puts_every_variable_at_hidden_width) {
  torch::manual_seed(0);
  const std::vector<tft::CategoricalVariable> categoricals{{"a", 5, 0}, {"b", 3, 16}};
  tft::InputEmbedding embedding(2, categoricals, 16);
  assert_int_equal(embedding->num_variables(), 4);
  auto reals = torch::randn({2, 7, 2});
  auto codes = torch::randint(3, {2, 7, 2}, torch::kLong);
  auto e = embedding(reals, codes);
  assert_true(e.sizes() == torch::IntArrayRef({2, 7, 4, 16}));
  // Real variable v at (b, t) is x * w_v + b_v.
  auto params = embedding->named_parameters();
  auto expected = reals[1][3][1] * params["real_weight"][1] + params["real_bias"][1];
  assert_true(max_abs(e[1][3][1] - expected) < 1e-6);  // fused multiply-add: last bit may differ
}

// Embedding dropout: in training the categoricals' vectors lose about p of their elements and
// keep the rest times 1 / (1 - p); the reals' vectors are left alone; in eval mode nothing is.
TFT_TEST(embedding_dropout_masks_the_categoricals_in_training_only) {
  const std::vector<tft::CategoricalVariable> categoricals{{"a", 5, 0}, {"b", 3, 16}};
  tft::InputEmbedding plain(2, categoricals, 16);
  tft::InputEmbedding dropped(2, categoricals, 16, 0.5);
  {
    torch::NoGradGuard no_grad;
    auto weights = plain->named_parameters();
    for (auto& p : dropped->named_parameters()) p.value().copy_(weights[p.key()]);
  }
  torch::manual_seed(0);
  const auto reals = torch::randn({4, 25, 2});
  const auto codes = torch::randint(3, {4, 25, 2}, torch::kLong);
  const auto reference = plain(reals, codes);
  const auto e = dropped(reals, codes);
  assert_true(torch::equal(e.narrow(-2, 0, 2), reference.narrow(-2, 0, 2)));
  const auto cat = e.narrow(-2, 2, 2), kept = (cat != 0).to(cat.scalar_type());
  const double dropped_share = 1.0 - kept.mean().item<double>();  // of 3,200 elements
  std::printf("  embedding dropout 0.5: %.3f of the categoricals' elements dropped\n",
              dropped_share);
  assert_true(dropped_share > 0.45 && dropped_share < 0.55);
  assert_true(torch::equal(cat, reference.narrow(-2, 2, 2) * kept * 2.0));
  dropped->eval();
  assert_true(torch::equal(dropped(reals, codes), reference));
}

TFT_TEST(selection_weights_are_distributions) {
  torch::manual_seed(0);
  tft::VariableSelectionNetwork vsn(5, 8, 0.1, /*with_context=*/true);
  auto x = torch::randn({4, 6, 5, 8});
  auto ctx = torch::randn({4, 8});
  auto out = vsn(x, ctx);
  assert_true(out.output.sizes() == torch::IntArrayRef({4, 6, 8}));
  assert_true(out.weights.sizes() == torch::IntArrayRef({4, 6, 5}));
  assert_true(max_abs(out.weights.sum(-1) - 1) < 1e-6);
  assert_true(out.weights.min().item<double>() >= 0);

  tft::VariableSelectionNetwork single(1, 8, 0.1, false);
  auto one = single(torch::randn({4, 6, 1, 8}));
  assert_true(max_abs(one.weights - 1) == 0);

  tft::StaticCovariateEncoder encoder(3, 8, 0.1);
  auto contexts = encoder(torch::randn({4, 3, 8}));
  for (const auto& t :
       {contexts.selection, contexts.enrichment, contexts.state_h, contexts.state_c}) {
    assert_true(t.sizes() == torch::IntArrayRef({4, 8}));
  }
  assert_true(max_abs(contexts.weights.sum(-1) - 1) < 1e-6);
}

// The grouped, factored forward against the network as the paper draws it: each variable
// through its own GRN, the weights GRN over all embedded variables flattened. Double
// precision, so the two orders of arithmetic agree to 1e-10; eval mode, so no dropout.
TFT_TEST(grouped_selection_equals_one_grn_per_variable) {
  torch::manual_seed(3);
  const std::vector<tft::CategoricalVariable> categoricals{{"a", 5, 3}, {"b", 4, 0}};
  for (const bool with_context : {false, true}) {
    for (const int64_t n_reals : {0, 1, 3}) {
      const int64_t hidden = 6, n = n_reals + 2;
      tft::InputEmbedding embedding(n_reals, categoricals, hidden);
      tft::VariableSelectionNetwork vsn(n, hidden, 0.1, with_context);
      embedding->to(torch::kDouble);
      vsn->to(torch::kDouble);
      vsn->eval();
      const auto options = torch::TensorOptions().dtype(torch::kDouble);
      const auto reals = n_reals > 0 ? torch::randn({3, 7, n_reals}, options) : torch::Tensor();
      const auto codes = torch::stack({torch::randint(5, {3, 7}), torch::randint(4, {3, 7})}, -1);
      const auto context = with_context ? torch::randn({3, hidden}, options) : torch::Tensor();

      // The paper's formula: each variable through its own GRN, the weights GRN over all
      // embedded variables flattened.
      const auto per_variable_formula = [&](const torch::Tensor& embedded) {
        tft::GatedResidualNetwork weights_grn = vsn->weights_grn();
        const auto weights = torch::softmax(weights_grn(embedded.flatten(-2), context), -1);
        auto output = torch::zeros({3, 7, hidden}, options);
        for (int64_t i = 0; i < n; ++i) {
          tft::GatedResidualNetwork grn = vsn->variable_grn(i);
          output = output + grn(embedded.select(-2, i)) * weights.select(-1, i).unsqueeze(-1);
        }
        return tft::VariableSelectionOutput{output, weights};
      };
      const auto grouped = vsn->select(embedding->embed(reals, codes), context);
      const auto embedded = embedding(reals, codes);  // [3, 7, n, hidden]
      const auto expected = per_variable_formula(embedded);
      assert_true(max_abs(grouped.weights - expected.weights) < 1e-10);
      assert_true(max_abs(grouped.output - expected.output) < 1e-10);
      // forward() on the multiplied-out embedding is the same function.
      assert_true(max_abs(vsn(embedded, context).output - expected.output) < 1e-10);

      // Gradients reach every parameter as they would through the per-variable formula.
      const auto grads_of = [&](const torch::Tensor& out) {
        std::vector<torch::Tensor> params = vsn->parameters();
        for (const auto& p : embedding->parameters()) params.push_back(p);
        for (auto& p : params) p.mutable_grad() = torch::Tensor();
        (out * out).sum().backward();
        std::vector<torch::Tensor> grads;
        for (const auto& p : params) {
          grads.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
        }
        return grads;
      };
      const auto fast = grads_of(vsn->select(embedding->embed(reals, codes), context).output);
      const auto slow = grads_of(per_variable_formula(embedding(reals, codes)).output);
      for (size_t k = 0; k < fast.size(); ++k) assert_true(max_abs(fast[k] - slow[k]) < 1e-9);
    }
  }
}

// Chunks of one step read the variables' GRN parameters stacked once (StackedVariableGrns):
// the same function, bit for bit, and the same gradients for every parameter.
TFT_TEST(selection_from_parameters_stacked_once_equals_stacking_each_time) {
  torch::manual_seed(4);
  const std::vector<tft::CategoricalVariable> categoricals{{"a", 5, 3}};
  const int64_t hidden = 8, n_reals = 2;
  tft::InputEmbedding embedding(n_reals, categoricals, hidden);
  tft::VariableSelectionNetwork vsn(n_reals + 1, hidden, 0.1, /*with_context=*/true);
  vsn->eval();
  assert_true(vsn->groups_variables());
  const auto reals = torch::randn({3, 7, n_reals});
  const auto codes = torch::randint(5, {3, 7, 1});
  const auto context = torch::randn({3, hidden});
  const auto grads_of = [&](bool stacked_once) {
    for (auto& p : vsn->parameters()) p.mutable_grad() = torch::Tensor();
    torch::Tensor total;
    const tft::StackedVariableGrns stacked = vsn->stacked_variable_grns();
    const auto from = tft::StackedVariableGrns::from(stacked.tensors(), 0);
    for (int64_t piece = 0; piece < 7; piece += 4) {  // two time chunks of one step
      const int64_t length = std::min<int64_t>(4, 7 - piece);
      const auto out = vsn->select(
          embedding->embed(reals.narrow(1, piece, length), codes.narrow(1, piece, length)), context,
          stacked_once ? &from : nullptr);
      const torch::Tensor part = (out.output * out.output).sum();
      total = total.defined() ? total + part : part;
    }
    total.backward();
    std::vector<torch::Tensor> grads{total.detach()};
    for (const auto& p : vsn->parameters()) grads.push_back(p.grad().clone());
    return grads;
  };
  const auto each_time = grads_of(false), once = grads_of(true);
  assert_int_equal(each_time.size(), once.size());
  for (size_t k = 0; k < once.size(); ++k) assert_true(torch::equal(each_time[k], once[k]));
  TFT_ASSERT_THROWS_WITH(tft::StackedVariableGrns::from({torch::ones({1})}, 0), c10::Error,
                         "expected 8 tensors");
}

TFT_TEST(mask_value_is_the_lowest_finite_value_of_the_dtype) {
  assert_true(tft::attention_mask_value(at::kFloat) ==
              static_cast<double>(std::numeric_limits<float>::lowest()));
  assert_true(tft::attention_mask_value(at::kDouble) == std::numeric_limits<double>::lowest());
  assert_true(tft::attention_mask_value(at::kHalf) == -65504.0);
  assert_true(tft::attention_mask_value(at::kBFloat16) ==
              static_cast<double>(std::numeric_limits<c10::BFloat16>::lowest()));
}

TFT_TEST(attention_is_causal_and_rows_are_distributions) {
  torch::manual_seed(0);
  tft::InterpretableMultiHeadAttention attention(16, 4, 0.0);
  attention->eval();
  const int64_t steps = 9, start = 6;
  auto memory = torch::randn({2, steps, 16});
  auto result = attention(memory.slice(1, start), memory, start);
  assert_true(result.output.sizes() == torch::IntArrayRef({2, 3, 16}));
  assert_true(result.weights.sizes() == torch::IntArrayRef({2, 3, steps}));
  assert_true(max_abs(result.weights.sum(-1) - 1) < 1e-6);
  for (int64_t i = 0; i < 3; ++i) {
    const int64_t position = start + i;
    if (position + 1 < steps) {
      assert_true(max_abs(result.weights.select(1, i).slice(-1, position + 1)) == 0);
    }
    assert_true(result.weights.select(1, i).slice(-1, 0, position + 1).min().item<double>() > 0);
  }
  // Changing a future position leaves earlier queries untouched, bit for bit.
  auto changed = memory.clone();
  changed.select(1, 8).add_(3.0);
  auto again = attention(changed.slice(1, start), changed, start);
  assert_true(torch::equal(again.output.slice(1, 0, 2), result.output.slice(1, 0, 2)));
  assert_false(torch::equal(again.output.select(1, 2), result.output.select(1, 2)));

  // A query chunk that only sees the keys up to its end gives the same answer.
  auto keys = attention->project_keys(memory), values = attention->project_values(memory);
  auto chunk =
      attention->attend(memory.slice(1, 6, 8), {keys.slice(1, 0, 8)}, {values.slice(1, 0, 8)}, 6);
  assert_true(max_abs(chunk.output - result.output.slice(1, 0, 2)) < 1e-6);
  assert_true(max_abs(chunk.weights - result.weights.slice(1, 0, 2).slice(-1, 0, 8)) < 1e-6);
  // Keys and values in pieces give the same answer as in one piece.
  auto pieces = attention->attend(memory.slice(1, 6, 8), {keys.slice(1, 0, 3), keys.slice(1, 3, 8)},
                                  {values.slice(1, 0, 3), values.slice(1, 3, 8)}, 6);
  assert_true(max_abs(pieces.output - chunk.output) < 1e-6);
  assert_true(max_abs(pieces.weights - chunk.weights) < 1e-6);
}

TFT_TEST(attention_heads_share_one_value_projection) {
  tft::InterpretableMultiHeadAttention attention(12, 3, 0.1);
  auto p = attention->named_parameters();
  assert_true(p["value.weight"].sizes() == torch::IntArrayRef({4, 12}));   // head_size x hidden
  assert_true(p["query.weight"].sizes() == torch::IntArrayRef({12, 12}));  // heads x head_size
  assert_true(p["output.weight"].sizes() == torch::IntArrayRef({12, 4}));
}

TFT_TEST(attention_block_chunks_agree_with_one_chunk) {
  torch::manual_seed(0);
  tft::AttentionBlock block(8, 2, 0.1, /*with_context=*/true);
  block->eval();
  auto x = torch::randn({2, 10, 8}), phi = torch::randn({2, 10, 8}), ctx = torch::randn({2, 8});
  tft::AttentionBlockSchedule one, four;
  four.chunks = 4;
  auto a = block->forward(x, phi, ctx, 7, one, true);
  auto b = block->forward(x, phi, ctx, 7, four, true);
  assert_true(a.output.sizes() == torch::IntArrayRef({2, 3, 8}));
  assert_true(a.attention.sizes() == torch::IntArrayRef({2, 3, 10}));
  assert_true(max_abs(a.output - b.output) < 1e-5);
  assert_true(max_abs(a.attention - b.attention) < 1e-6);
  // 2 key-only pieces of one step, 4 query chunks of two: more query chunks than pieces.
  assert_int_equal(tft::query_chunk_count(2, 8, 4, 8, 2), 4);
  const auto c = block->forward(x, phi, ctx, 2, one, true);
  const auto d = block->forward(x, phi, ctx, 2, four, true);
  assert_true(max_abs(c.output - d.output) < 1e-5);
  assert_true(max_abs(c.attention - d.attention) < 1e-6);
  auto all = block->forward(x, phi, ctx, 0, four, false);
  assert_true(all.output.sizes() == torch::IntArrayRef({2, 10, 8}));
  assert_false(all.attention.defined());
}

// The last block's query chunks keep about as much as its key-only pieces, 1 to `chunks`.
TFT_TEST(attention_query_chunks_follow_the_key_only_pieces) {
  // The reference configuration: pieces of 42 steps at hidden 160 hold 67,200 rows, a query
  // step 1,600 + 3 x 4 x 192 = 3,904: one chunk of 24 steps. At hidden 16 (host-bound) a
  // piece holds 6,720, a query step 2,464: 9 chunks of 2.7 steps, at most 4.
  assert_int_equal(tft::query_chunk_count(168, 24, 4, 160, 4), 1);
  assert_int_equal(tft::query_chunk_count(168, 24, 4, 16, 4), 4);
  assert_int_equal(tft::query_chunk_count(168, 48, 4, 160, 4), 3);   // 3.0 chunks of 16 steps
  assert_int_equal(tft::query_chunk_count(168, 24, 4, 160, 16), 4);  // more heads, more scores
  assert_int_equal(tft::query_chunk_count(7, 3, 4, 8, 2), 3);
  assert_int_equal(tft::query_chunk_count(0, 192, 4, 160, 4), 4);  // no key-only steps
  assert_int_equal(tft::query_chunk_count(168, 1, 4, 160, 4), 1);
  assert_int_equal(tft::chunks_as_long_as(24, 168, 8, 4), 1);
  assert_int_equal(tft::chunks_as_long_as(24, 0, 8, 4), 4);  // no reference: the most
}

TFT_TEST(pinball_loss_values) {
  tft::QuantileLoss loss(std::vector<double>{0.1, 0.5, 0.9});
  // Target 1, every quantile predicts 0: under-forecast costs q -> mean(0.1, 0.5, 0.9) = 0.5.
  auto under = loss(torch::zeros({1, 1, 3}), torch::ones({1, 1}));
  assert_true(std::abs(under.item<double>() - 0.5) < 1e-7);
  // Target 0, predictions 2: over-forecast costs (1 - q) * 2 -> (1.8 + 1.0 + 0.2) / 3.
  auto over = loss(torch::full({1, 1, 3}, 2.0), torch::zeros({1, 1}));
  assert_true(std::abs(over.item<double>() - 3.0 / 3) < 1e-6);
  auto exact = loss(torch::ones({2, 4, 3}), torch::ones({2, 4}));
  assert_true(exact.item<double>() == 0.0);
  TFT_ASSERT_THROWS_WITH(loss(torch::zeros({2, 4, 2}), torch::zeros({2, 4})), c10::Error,
                         "does not match");
}

namespace {

// A chunked LSTM like the model's LSTM units, each chunk one segment, with grad on in every
// pass as segment.h asks of operators that pick their kernel by grad mode.
struct LstmRun {
  torch::Tensor output;
  TensorVector grads;
};

LstmRun run_chunked_lstm(torch::nn::LSTM& lstm, const torch::Tensor& x, tft::SegmentMode mode) {
  for (auto& p : lstm->parameters()) p.mutable_grad() = torch::Tensor();
  auto h = torch::zeros({1, x.size(0), 8}), c = torch::zeros({1, x.size(0), 8});
  TensorVector outputs;
  for (const auto span : tft::split_span(0, x.size(1), 3)) {
    auto r = tft::run_segment(
        [lstm](const TensorVector& in) mutable {
          return tft::with_training_grad_mode(lstm->is_training(), [&] {
            auto [out, state] = lstm->forward(in[0], std::make_tuple(in[1], in[2]));
            return TensorVector{out, std::get<0>(state), std::get<1>(state)};
          });
        },
        {x.slice(1, span.begin, span.end), h, c}, {lstm.ptr()}, mode);
    outputs.push_back(r[0]);
    h = r[1];
    c = r[2];
  }
  LstmRun run{torch::cat(outputs, 1), {}};
  (run.output.pow(2).sum() + h.sum()).backward();
  for (auto& p : lstm->parameters()) run.grads.push_back(p.grad().clone());
  return run;
}

}  // namespace

// The same chunked LSTM (seeded alike) in `mode` and recomputed.
static std::pair<LstmRun, LstmRun> lstm_in_mode_and_recomputed(tft::SegmentMode mode) {
  torch::manual_seed(3);
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(4, 8).batch_first(true));
  auto x = torch::randn({3, 20, 4});
  LstmRun in_mode = run_chunked_lstm(lstm, x, mode);
  return {std::move(in_mode), run_chunked_lstm(lstm, x, tft::SegmentMode::kRecomputed)};
}

TFT_TEST(kept_and_checkpointed_segments_give_identical_gradients) {
  const auto [kept, recomputed] = lstm_in_mode_and_recomputed(tft::SegmentMode::kKept);
  assert_true(torch::equal(kept.output, recomputed.output));
  for (size_t i = 0; i < kept.grads.size(); ++i) {
    assert_true(torch::equal(kept.grads[i], recomputed.grads[i]));
  }
}

// A plain graph sums a weight's gradient use by use, a segment per segment: the same values
// up to float32 rounding, not the same bits (segment.h).
TFT_TEST(plain_graph_segments_give_gradients_within_rounding) {
  const auto [graph, recomputed] = lstm_in_mode_and_recomputed(tft::SegmentMode::kGraph);
  assert_true(torch::equal(graph.output, recomputed.output));
  for (size_t i = 0; i < graph.grads.size(); ++i) {
    const double scale = recomputed.grads[i].abs().max().item<double>();
    assert_true(max_abs(graph.grads[i] - recomputed.grads[i]) <= 1e-5 * scale);
  }
}

TFT_TEST(kept_segment_honours_retain_graph_and_refuses_a_second_backward) {
  torch::manual_seed(3);
  torch::nn::Linear linear(4, 4);
  auto x = torch::randn({2, 4}, torch::requires_grad());
  auto run = [&] {
    return tft::run_segment(
        [linear](const TensorVector& in) mutable { return TensorVector{linear(in[0]).tanh()}; },
        {x}, {linear.ptr()}, tft::SegmentMode::kKept)[0];
  };
  auto y = run().sum();
  y.backward({}, /*retain_graph=*/true);
  auto once = x.grad().clone();
  y.backward();
  assert_true(max_abs(x.grad() - 2 * once) < 1e-6);
  TFT_ASSERT_THROWS_WITH(y.backward(), c10::Error, "second time");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(split_span_covers_the_range_evenly),
      cmocka_unit_test(dropout_masks_keep_the_right_share_and_repeat_with_the_generator),
      cmocka_unit_test(grn_shapes_and_context),
      cmocka_unit_test(embedding_puts_every_variable_at_hidden_width),
      cmocka_unit_test(embedding_dropout_masks_the_categoricals_in_training_only),
      cmocka_unit_test(selection_weights_are_distributions),
      cmocka_unit_test(grouped_selection_equals_one_grn_per_variable),
      cmocka_unit_test(selection_from_parameters_stacked_once_equals_stacking_each_time),
      cmocka_unit_test(mask_value_is_the_lowest_finite_value_of_the_dtype),
      cmocka_unit_test(attention_is_causal_and_rows_are_distributions),
      cmocka_unit_test(attention_heads_share_one_value_projection),
      cmocka_unit_test(attention_block_chunks_agree_with_one_chunk),
      cmocka_unit_test(attention_query_chunks_follow_the_key_only_pieces),
      cmocka_unit_test(pinball_loss_values),
      cmocka_unit_test(kept_and_checkpointed_segments_give_identical_gradients),
      cmocka_unit_test(plain_graph_segments_give_gradients_within_rounding),
      cmocka_unit_test(kept_segment_honours_retain_graph_and_refuses_a_second_backward),
  };
  return cmocka_run_group_tests_name("model_blocks", tests, nullptr, nullptr);
}
