// tft::CheckpointConfig: the seed's formulas (shared/seeds/README.md) row by row, summaries,
// defaults, builders and validation messages. Expected values are worked out by hand from
// the formulas and written as the arithmetic they come from (1.0 - 3.0 / 6 ...).
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_config.h"
#include "common/error.h"

// cmocka last: it defines macros such as fail() that clash with C++ headers, and
// 1.1.5 has no extern "C" guard of its own.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
extern "C" {
#include <cmocka.h>
}

using tft::CheckpointConfig;

namespace {

// Runs `action`, which must throw tft::ConfigError whose message contains `expected`.
void expect_config_error(const std::function<void()>& action, const char* expected,
                         const char* label) {
  try {
    action();
  } catch (const tft::ConfigError& e) {
    if (std::strstr(e.what(), expected) == nullptr) {
      fail_msg("%s: message \"%s\" does not contain \"%s\"", label, e.what(), expected);
    }
    return;
  } catch (const std::exception& e) {
    fail_msg("%s: threw a non-ConfigError: %s", label, e.what());
  }
  fail_msg("%s: no error thrown (expected \"%s\")", label, expected);
}

void expect_valid(const CheckpointConfig& c, const char* label) {
  try {
    c.validate();
  } catch (const std::exception& e) {
    fail_msg("%s: unexpected error: %s", label, e.what());
  }
}

void expect_valid_for(const CheckpointConfig& c, size_t num_units, const char* label) {
  try {
    c.validate(num_units);
  } catch (const std::exception& e) {
    fail_msg("%s: unexpected error: %s", label, e.what());
  }
}

void expect_near(double got, double expected, const char* what, const char* label) {
  if (!(std::fabs(got - expected) < 1e-12)) {
    fail_msg("%s: %s = %.17g, expected %.17g", label, what, got, expected);
  }
}

// One row: a config, a model size n and a unit index i, with what the formulas give.
struct Row {
  const char* label;
  CheckpointConfig config;
  size_t n;
  size_t i;
  bool checkpointed;
  double savings;
  double overhead;
};

std::vector<Row> formula_rows() {
  const CheckpointConfig u2 = CheckpointConfig::uniform(2);
  const CheckpointConfig u3 = CheckpointConfig::uniform(3);
  const CheckpointConfig s03 = CheckpointConfig::selective({0, 3});
  const CheckpointConfig d6 = CheckpointConfig::dynamic(6, 0.3);
  const CheckpointConfig d10 = CheckpointConfig::dynamic(10, 0.35);
  return {
      // uniform(2), n=6: ceil(6/2)=3 -> 1-3/6; floor(2/2)=1 -> 1+1/6.
      {"uniform(2) n6 i0", u2, 6, 0, true, 1.0 - 3.0 / 6, 1.0 + 1.0 / 6},
      {"uniform(2) n6 i1", u2, 6, 1, false, 1.0 - 3.0 / 6, 1.0 + 1.0 / 6},
      {"uniform(2) n6 i2", u2, 6, 2, true, 1.0 - 3.0 / 6, 1.0 + 1.0 / 6},
      {"uniform(2) n6 i5", u2, 6, 5, false, 0.5, 1.0 + 1.0 / 6},
      // uniform(3), n=7: ceil(7/3)=3 -> 1-3/7; floor(3/2)=1 -> 1+1/7.
      {"uniform(3) n7 i0", u3, 7, 0, true, 1.0 - 3.0 / 7, 1.0 + 1.0 / 7},
      {"uniform(3) n7 i3", u3, 7, 3, true, 1.0 - 3.0 / 7, 1.0 + 1.0 / 7},
      {"uniform(3) n7 i4", u3, 7, 4, false, 1.0 - 3.0 / 7, 1.0 + 1.0 / 7},
      {"uniform(3) n7 i6", u3, 7, 6, true, 1.0 - 3.0 / 7, 1.0 + 1.0 / 7},
      // uniform(1), n=5: ceil(5/1)=5 -> 0 saved; floor(1/2)=0 -> no overhead.
      {"uniform(1) n5 i0", CheckpointConfig::uniform(1), 5, 0, true, 0.0, 1.0},
      {"uniform(1) n5 i3", CheckpointConfig::uniform(1), 5, 3, true, 0.0, 1.0},
      // uniform(4), n=10: ceil(10/4)=3 -> 0.7; floor(4/2)=2 -> 1.2.
      {"uniform(4) n10 i4", CheckpointConfig::uniform(4), 10, 4, true, 0.7, 1.2},
      {"uniform(4) n10 i6", CheckpointConfig::uniform(4), 10, 6, false, 0.7, 1.2},
      {"uniform(4) n10 i8", CheckpointConfig::uniform(4), 10, 8, true, 0.7, 1.2},
      // uniform(5), n=12: ceil(12/5)=3 -> 0.75; floor(5/2)=2 -> 1+2/12.
      {"uniform(5) n12 i10", CheckpointConfig::uniform(5), 12, 10, true, 0.75, 1.0 + 2.0 / 12},
      {"uniform(5) n12 i11", CheckpointConfig::uniform(5), 12, 11, false, 0.75, 1.0 + 2.0 / 12},
      // uniform(2), n=3: ceil(3/2)=2 -> 1-2/3; 1+1/3.
      {"uniform(2) n3 i2", u2, 3, 2, true, 1.0 - 2.0 / 3, 1.0 + 1.0 / 3},
      // uniform(0): never checkpoints, 0 saved, no overhead.
      {"uniform(0) n6 i0", CheckpointConfig::uniform(0), 6, 0, false, 0.0, 1.0},
      {"uniform(0) n6 i3", CheckpointConfig::uniform(0), 6, 3, false, 0.0, 1.0},
      // k >= n: 0 saved, no overhead, unit 0 (and multiples of k) still checkpointed.
      {"uniform(6) n6 i0", CheckpointConfig::uniform(6), 6, 0, true, 0.0, 1.0},
      {"uniform(6) n6 i3", CheckpointConfig::uniform(6), 6, 3, false, 0.0, 1.0},
      {"uniform(6) n6 i6", CheckpointConfig::uniform(6), 6, 6, true, 0.0, 1.0},
      {"uniform(8) n6 i0", CheckpointConfig::uniform(8), 6, 0, true, 0.0, 1.0},
      {"uniform(3) n1 i0", u3, 1, 0, true, 0.0, 1.0},
      {"uniform(2) n0 i0", u2, 0, 0, true, 0.0, 1.0},
      // selective({0,3}), n=6: 1-2/6; floor(6/2)=3, floor(3/2)=1 -> 1+1/6.
      {"selective{0,3} n6 i0", s03, 6, 0, true, 1.0 - 2.0 / 6, 1.0 + 1.0 / 6},
      {"selective{0,3} n6 i1", s03, 6, 1, false, 1.0 - 2.0 / 6, 1.0 + 1.0 / 6},
      {"selective{0,3} n6 i3", s03, 6, 3, true, 1.0 - 2.0 / 6, 1.0 + 1.0 / 6},
      {"selective{0,3} n6 i5", s03, 6, 5, false, 1.0 - 2.0 / 6, 1.0 + 1.0 / 6},
      // selective({1,2,4}), n=10: 1-3/10; floor(10/3)=3, floor(3/2)=1 -> 1.1.
      {"selective{1,2,4} n10 i1", CheckpointConfig::selective({1, 2, 4}), 10, 1, true, 0.7, 1.1},
      {"selective{1,2,4} n10 i3", CheckpointConfig::selective({1, 2, 4}), 10, 3, false, 0.7, 1.1},
      {"selective{1,2,4} n10 i4", CheckpointConfig::selective({1, 2, 4}), 10, 4, true, 0.7, 1.1},
      // selective({5}), n=6: 1-1/6; floor(6/1)=6, floor(6/2)=3 -> 1.5.
      {"selective{5} n6 i5", CheckpointConfig::selective({5}), 6, 5, true, 1.0 - 1.0 / 6, 1.5},
      {"selective{5} n6 i0", CheckpointConfig::selective({5}), 6, 0, false, 1.0 - 1.0 / 6, 1.5},
      // selective({2,7}), n=8: 1-2/8; floor(8/2)=4, floor(4/2)=2 -> 1.25.
      {"selective{2,7} n8 i7", CheckpointConfig::selective({2, 7}), 8, 7, true, 0.75, 1.25},
      {"selective{2,7} n8 i8", CheckpointConfig::selective({2, 7}), 8, 8, false, 0.75, 1.25},
      // Empty list: nothing checkpointed, 0 saved, no overhead.
      {"selective{} n6 i0", CheckpointConfig::selective({}), 6, 0, false, 0.0, 1.0},
      // n == 0: our deviation, 0 saved and no overhead instead of a division by zero.
      {"selective{0,3} n0 i0", s03, 0, 0, true, 0.0, 1.0},
      // Seed parity: more entries than units is not clamped: 1-4/3; floor(3/4)=0 -> 1.
      {"selective{0,1,2,3} n3", CheckpointConfig::selective({0, 1, 2, 3}), 3, 2, true,
       1.0 - 4.0 / 3, 1.0},
      // dynamic(6, 0.3): trunc(1.8)=1 -> interval 1, all units; 1-0.3; 1+0.7*0.3.
      {"dynamic(6,.3) i0", d6, 6, 0, true, 0.7, 1.21},
      {"dynamic(6,.3) i1", d6, 6, 1, true, 0.7, 1.21},
      {"dynamic(6,.3) i5", d6, 6, 5, true, 0.7, 1.21},
      // dynamic(10, 0.35): trunc(3.5)=3 -> interval 3; 0.65; 1+0.65*0.3.
      {"dynamic(10,.35) i0", d10, 10, 0, true, 0.65, 1.195},
      {"dynamic(10,.35) i1", d10, 10, 1, false, 0.65, 1.195},
      {"dynamic(10,.35) i3", d10, 10, 3, true, 0.65, 1.195},
      {"dynamic(10,.35) i9", d10, 10, 9, true, 0.65, 1.195},
      {"dynamic(10,.35) i10", d10, 10, 10, false, 0.65, 1.195},
      // min interval 4 beats trunc(3.5)=3.
      {"dynamic(10,.35) min4 i4", d10.with_min_interval(4), 10, 4, true, 0.65, 1.195},
      {"dynamic(10,.35) min4 i3", d10.with_min_interval(4), 10, 3, false, 0.65, 1.195},
      {"dynamic(10,.35) min4 i8", d10.with_min_interval(4), 10, 8, true, 0.65, 1.195},
      // dynamic(6, 0): trunc(0)=0 -> interval max(1, 0)=1; 1 saved; 1.3.
      {"dynamic(6,0) i1", CheckpointConfig::dynamic(6, 0.0), 6, 1, true, 1.0, 1.3},
      // dynamic(6, 1): interval 6; 0 saved; no overhead.
      {"dynamic(6,1) i0", CheckpointConfig::dynamic(6, 1.0), 6, 0, true, 0.0, 1.0},
      {"dynamic(6,1) i3", CheckpointConfig::dynamic(6, 1.0), 6, 3, false, 0.0, 1.0},
      {"dynamic(6,1) i6", CheckpointConfig::dynamic(6, 1.0), 6, 6, true, 0.0, 1.0},
      // dynamic(4, 0.5): interval 2; the n passed to the queries does not matter.
      {"dynamic(4,.5) n100 i2", CheckpointConfig::dynamic(4, 0.5), 100, 2, true, 0.5, 1.15},
      {"dynamic(4,.5) n100 i1", CheckpointConfig::dynamic(4, 0.5), 100, 1, false, 0.5, 1.15},
      // none: nothing, 0 saved, no overhead, whatever the flags say.
      {"none n6 i0", CheckpointConfig::none(), 6, 0, false, 0.0, 1.0},
      {"none n0 i0", CheckpointConfig::none(), 0, 0, false, 0.0, 1.0},
      {"none+flags n6 i2", CheckpointConfig::none().with_checkpoint_attention(true), 6, 2, false,
       0.0, 1.0},
      // The sub-layer flags do not change which units are checkpointed.
      {"uniform(2) no flags i2", u2.with_checkpoint_attention(false).with_checkpoint_ffn(false), 6,
       2, true, 0.5, 1.0 + 1.0 / 6},
      // min interval only bounds the dynamic strategy (seed parity).
      {"uniform(2) min4 i2", u2.with_min_interval(4), 6, 2, true, 0.5, 1.0 + 1.0 / 6},
  };
}

void test_formula_table(void** state) {
  (void)state;
  const std::vector<Row> rows = formula_rows();
  assert_true(rows.size() >= 40);
  for (const Row& row : rows) {
    if (row.config.should_checkpoint(row.i) != row.checkpointed) {
      fail_msg("%s: should_checkpoint(%zu) = %d, expected %d", row.label, row.i, !row.checkpointed,
               row.checkpointed);
    }
    expect_near(row.config.memory_savings(row.n), row.savings, "memory_savings", row.label);
    expect_near(row.config.compute_overhead(row.n), row.overhead, "compute_overhead", row.label);
  }
  print_message("%zu formula rows checked\n", rows.size());
}

void test_dynamic_interval(void** state) {
  (void)state;
  assert_int_equal(CheckpointConfig::dynamic(6, 0.3).dynamic_interval(), 1);
  assert_int_equal(CheckpointConfig::dynamic(10, 0.35).dynamic_interval(), 3);
  assert_int_equal(CheckpointConfig::dynamic(10, 0.35).with_min_interval(4).dynamic_interval(), 4);
  assert_int_equal(CheckpointConfig::dynamic(6, 1.0).dynamic_interval(), 6);
  assert_int_equal(CheckpointConfig::dynamic(6, 0.0).dynamic_interval(), 1);
  assert_int_equal(CheckpointConfig::uniform(2).dynamic_interval(), 0);
  assert_int_equal(CheckpointConfig::none().dynamic_interval(), 0);
  // A bad fraction set directly must not be undefined behaviour; it counts as 0 -> 1.
  CheckpointConfig bad = CheckpointConfig::dynamic(6, 0.5);
  std::get<tft::DynamicStrategy>(bad.strategy).memory_fraction =
      std::numeric_limits<double>::quiet_NaN();
  assert_int_equal(bad.dynamic_interval(), 1);
  assert_true(bad.should_checkpoint(3));
}

void test_summary(void** state) {
  (void)state;
  assert_string_equal(CheckpointConfig::none().summary().c_str(), "No checkpointing");
  assert_string_equal(CheckpointConfig{}.summary().c_str(), "No checkpointing");
  assert_string_equal(CheckpointConfig::uniform(2).summary().c_str(),
                      "Uniform checkpointing every 2 layers");
  assert_string_equal(CheckpointConfig::uniform(1).summary().c_str(),
                      "Uniform checkpointing every 1 layers");
  assert_string_equal(CheckpointConfig::selective({0, 3}).summary().c_str(),
                      "Selective checkpointing at 2 layers");
  assert_string_equal(CheckpointConfig::selective({}).summary().c_str(),
                      "Selective checkpointing at 0 layers");
  assert_string_equal(CheckpointConfig::dynamic(6, 0.3).summary().c_str(),
                      "Dynamic checkpointing (6 layers, 30.0% memory target)");
  assert_string_equal(CheckpointConfig::dynamic(12, 1.0).summary().c_str(),
                      "Dynamic checkpointing (12 layers, 100.0% memory target)");
  assert_string_equal(CheckpointConfig::dynamic(4, 0.0).summary().c_str(),
                      "Dynamic checkpointing (4 layers, 0.0% memory target)");
  assert_string_equal(CheckpointConfig::dynamic(4, 0.125).summary().c_str(),
                      "Dynamic checkpointing (4 layers, 12.5% memory target)");
}

void test_strategy_name(void** state) {
  (void)state;
  assert_string_equal(CheckpointConfig::none().strategy_name().c_str(), "none");
  assert_string_equal(CheckpointConfig::uniform(2).strategy_name().c_str(), "uniform");
  assert_string_equal(CheckpointConfig::selective({1}).strategy_name().c_str(), "selective");
  assert_string_equal(CheckpointConfig::dynamic(6, 0.5).strategy_name().c_str(), "dynamic");
}

void test_defaults(void** state) {
  (void)state;
  const CheckpointConfig d;
  assert_true(std::holds_alternative<tft::NoCheckpointing>(d.strategy));
  assert_false(d.checkpoint_attention);
  assert_false(d.checkpoint_ffn);
  assert_int_equal(d.min_checkpoint_interval, 1);
  assert_true(d == CheckpointConfig::none());
  expect_valid(d, "default");

  const CheckpointConfig u = CheckpointConfig::uniform(3);
  assert_true(std::get<tft::UniformStrategy>(u.strategy).interval == 3);
  assert_true(u.checkpoint_attention);
  assert_true(u.checkpoint_ffn);
  assert_int_equal(u.min_checkpoint_interval, 1);

  const CheckpointConfig s = CheckpointConfig::selective({4, 1});
  assert_true(std::get<tft::SelectiveStrategy>(s.strategy).layers == (std::vector<size_t>{4, 1}));
  assert_true(s.checkpoint_attention && s.checkpoint_ffn);
  assert_int_equal(s.min_checkpoint_interval, 1);

  const CheckpointConfig y = CheckpointConfig::dynamic(6, 0.3);
  assert_int_equal(std::get<tft::DynamicStrategy>(y.strategy).num_layers, 6);
  assert_true(std::get<tft::DynamicStrategy>(y.strategy).memory_fraction == 0.3);
  assert_true(y.checkpoint_attention && y.checkpoint_ffn);
  assert_int_equal(y.min_checkpoint_interval, 1);
}

void test_equality(void** state) {
  (void)state;
  assert_true(CheckpointConfig::uniform(2) == CheckpointConfig::uniform(2));
  assert_true(CheckpointConfig::uniform(2) != CheckpointConfig::uniform(3));
  assert_true(CheckpointConfig::uniform(1) != CheckpointConfig::selective({0}));
  assert_true(CheckpointConfig::selective({0, 3}) == CheckpointConfig::selective({0, 3}));
  assert_true(CheckpointConfig::selective({0, 3}) != CheckpointConfig::selective({3, 0}));
  assert_true(CheckpointConfig::dynamic(6, 0.3) == CheckpointConfig::dynamic(6, 0.3));
  assert_true(CheckpointConfig::dynamic(6, 0.3) != CheckpointConfig::dynamic(6, 0.4));
  assert_true(CheckpointConfig::dynamic(6, 0.3) != CheckpointConfig::dynamic(7, 0.3));
  assert_true(CheckpointConfig::uniform(2) !=
              CheckpointConfig::uniform(2).with_checkpoint_ffn(false));
  assert_true(CheckpointConfig::uniform(2) !=
              CheckpointConfig::uniform(2).with_checkpoint_attention(false));
  assert_true(CheckpointConfig::uniform(2) != CheckpointConfig::uniform(2).with_min_interval(2));
  assert_true(CheckpointConfig::uniform(2) !=
              CheckpointConfig::uniform(2).with_boundary_dtype(tft::BoundaryDtype::kInt8));
  assert_true(CheckpointConfig::uniform(2) ==
              CheckpointConfig::uniform(2).with_boundary_dtype(tft::BoundaryDtype::kFloat32));
}

void test_boundary_dtype(void** state) {
  (void)state;
  assert_true(CheckpointConfig{}.boundary_dtype == tft::BoundaryDtype::kFloat32);
  assert_true(CheckpointConfig::uniform(1).boundary_dtype == tft::BoundaryDtype::kFloat32);
  const CheckpointConfig base = CheckpointConfig::uniform(1);
  const CheckpointConfig int8 = base.with_boundary_dtype(tft::BoundaryDtype::kInt8);
  assert_true(int8.boundary_dtype == tft::BoundaryDtype::kInt8);
  assert_true(base.boundary_dtype == tft::BoundaryDtype::kFloat32);  // receiver untouched
  assert_string_equal(int8.summary().c_str(),
                      "Uniform checkpointing every 1 layers, int8 boundaries");
  assert_string_equal(CheckpointConfig::dynamic(6, 0.3)
                          .with_boundary_dtype(tft::BoundaryDtype::kBFloat16)
                          .summary()
                          .c_str(),
                      "Dynamic checkpointing (6 layers, 30.0% memory target), bfloat16 boundaries");
  for (const char* name : {"float32", "bfloat16", "int8"}) {
    assert_string_equal(tft::boundary_dtype_name(*tft::parse_boundary_dtype(name)).c_str(), name);
  }
  assert_false(tft::parse_boundary_dtype("bf16").has_value());
  assert_false(tft::parse_boundary_dtype("").has_value());
  // The planner's and report's model: 4, 2 or 1 byte per element, int8 plus a float scale per
  // channel.
  assert_int_equal(tft::boundary_bytes(tft::BoundaryDtype::kFloat32, 1000, 10), 4000);
  assert_int_equal(tft::boundary_bytes(tft::BoundaryDtype::kBFloat16, 1000, 10), 2000);
  assert_int_equal(tft::boundary_bytes(tft::BoundaryDtype::kInt8, 1000, 10), 1040);
}

void test_builders(void** state) {
  (void)state;
  const CheckpointConfig base = CheckpointConfig::uniform(2);
  const CheckpointConfig a = base.with_checkpoint_attention(false);
  assert_false(a.checkpoint_attention);
  assert_true(a.checkpoint_ffn);
  assert_true(base.checkpoint_attention);  // receiver untouched

  const CheckpointConfig f = base.with_checkpoint_ffn(false);
  assert_true(f.checkpoint_attention);
  assert_false(f.checkpoint_ffn);
  assert_true(base.checkpoint_ffn);

  const CheckpointConfig m = base.with_min_interval(5);
  assert_int_equal(m.min_checkpoint_interval, 5);
  assert_int_equal(base.min_checkpoint_interval, 1);
  assert_true(m.strategy == base.strategy);

  const CheckpointConfig chained = CheckpointConfig::none()
                                       .with_checkpoint_attention(true)
                                       .with_checkpoint_ffn(true)
                                       .with_min_interval(3);
  assert_true(std::holds_alternative<tft::NoCheckpointing>(chained.strategy));
  assert_true(chained.checkpoint_attention && chained.checkpoint_ffn);
  assert_int_equal(chained.min_checkpoint_interval, 3);
}

void test_validate_ok(void** state) {
  (void)state;
  expect_valid(CheckpointConfig::none(), "none");
  expect_valid(CheckpointConfig::uniform(1), "uniform(1)");
  expect_valid(CheckpointConfig::uniform(100), "uniform(100)");
  expect_valid(CheckpointConfig::selective({}), "selective{}");
  expect_valid(CheckpointConfig::selective({5, 0, 3}), "selective{5,0,3}");
  expect_valid(CheckpointConfig::dynamic(6, 0.0), "dynamic(6,0)");
  expect_valid(CheckpointConfig::dynamic(6, 1.0), "dynamic(6,1)");
  expect_valid(CheckpointConfig::dynamic(1, 0.5).with_min_interval(9), "dynamic min9");
  // With a model size: selective indices below it pass; uniform/dynamic fit any size.
  expect_valid_for(CheckpointConfig::selective({0, 5}), 6, "selective{0,5} n6");
  expect_valid_for(CheckpointConfig::uniform(100), 6, "uniform(100) n6");
  expect_valid_for(CheckpointConfig::dynamic(6, 0.3), 12, "dynamic(6) n12");
  expect_valid_for(CheckpointConfig::dynamic(12, 0.3), 6, "dynamic(12) n6");
  expect_valid_for(CheckpointConfig::none(), 0, "none n0");
  assert_false(CheckpointConfig::selective({0, 5}).find_problem(6).has_value());
}

void test_validate_errors(void** state) {
  (void)state;
  expect_config_error([] { CheckpointConfig::uniform(0).validate(); },
                      "checkpoint.interval: must be at least 1 (got 0)", "uniform(0)");
  expect_config_error([] { CheckpointConfig::uniform(0).validate(6); },
                      "checkpoint.interval: must be at least 1 (got 0)", "uniform(0) n6");
  expect_config_error([] { CheckpointConfig::selective({1, 3, 1}).validate(); },
                      "checkpoint.layers: duplicate index 1", "duplicates");
  expect_config_error([] { CheckpointConfig::selective({0, 7}).validate(6); },
                      "checkpoint.layers: index 7 is out of range for 6 units", "out of range");
  expect_config_error([] { CheckpointConfig::selective({6}).validate(6); },
                      "checkpoint.layers: index 6 is out of range for 6 units", "index == n");
  expect_config_error([] { CheckpointConfig::uniform(2).with_min_interval(0).validate(); },
                      "checkpoint.min_checkpoint_interval: must be at least 1 (got 0)",
                      "min interval 0");
  expect_config_error([] { CheckpointConfig::none().with_min_interval(0).validate(); },
                      "checkpoint.min_checkpoint_interval: must be at least 1 (got 0)",
                      "none min interval 0");
  // Fields set directly bypass dynamic()'s checks; validate() catches them.
  expect_config_error(
      [] {
        CheckpointConfig c = CheckpointConfig::dynamic(6, 0.5);
        c.strategy = tft::DynamicStrategy{0, 0.5};
        c.validate();
      },
      "checkpoint.num_layers: must be at least 1 (got 0)", "dynamic 0 layers");
  expect_config_error(
      [] {
        CheckpointConfig c;
        c.strategy = tft::DynamicStrategy{6, 1.5};
        c.validate();
      },
      "checkpoint.memory_fraction: must be a finite number in [0, 1] (got 1.5)", "dynamic 1.5");
  expect_config_error(
      [] {
        CheckpointConfig c;
        c.strategy = tft::DynamicStrategy{6, std::nan("")};
        c.validate();
      },
      "checkpoint.memory_fraction: must be a finite number in [0, 1] (got nan)", "dynamic nan");

  // find_problem names the field so loaders can point at its line.
  const auto p = CheckpointConfig::selective({2, 2}).find_problem();
  assert_true(p.has_value());
  assert_string_equal(p->field.c_str(), "layers");
  assert_string_equal(p->message.c_str(), "checkpoint.layers: duplicate index 2");
  const auto q = CheckpointConfig::uniform(3).with_min_interval(0).find_problem();
  assert_true(q.has_value());
  assert_string_equal(q->field.c_str(), "min_checkpoint_interval");
}

void test_dynamic_constructor_errors(void** state) {
  (void)state;
  expect_config_error([] { (void)CheckpointConfig::dynamic(0, 0.5); },
                      "checkpoint.num_layers: must be at least 1 (got 0)", "0 layers");
  expect_config_error([] { (void)CheckpointConfig::dynamic(6, -0.1); },
                      "checkpoint.memory_fraction: must be a finite number in [0, 1] (got -0.1)",
                      "-0.1");
  expect_config_error([] { (void)CheckpointConfig::dynamic(6, 1.1); },
                      "checkpoint.memory_fraction: must be a finite number in [0, 1] (got 1.1)",
                      "1.1");
  expect_config_error(
      [] { (void)CheckpointConfig::dynamic(6, std::numeric_limits<double>::quiet_NaN()); },
      "checkpoint.memory_fraction: must be a finite number in [0, 1] (got nan)", "NaN");
  expect_config_error(
      [] { (void)CheckpointConfig::dynamic(6, std::numeric_limits<double>::infinity()); },
      "checkpoint.memory_fraction: must be a finite number in [0, 1] (got inf)", "inf");
  expect_config_error(
      [] { (void)CheckpointConfig::dynamic(6, -std::numeric_limits<double>::infinity()); },
      "(got -inf)", "-inf");
  // The bounds themselves are allowed.
  assert_true(CheckpointConfig::dynamic(1, 0.0).memory_savings(1) == 1.0);
  assert_true(CheckpointConfig::dynamic(1, 1.0).memory_savings(1) == 0.0);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_formula_table),
      cmocka_unit_test(test_dynamic_interval),
      cmocka_unit_test(test_summary),
      cmocka_unit_test(test_strategy_name),
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_equality),
      cmocka_unit_test(test_boundary_dtype),
      cmocka_unit_test(test_builders),
      cmocka_unit_test(test_validate_ok),
      cmocka_unit_test(test_validate_errors),
      cmocka_unit_test(test_dynamic_constructor_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
