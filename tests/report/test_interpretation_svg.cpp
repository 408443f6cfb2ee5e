// interpretation.svg from hand-made interpretations: the four panels, bars in order, names
// escaped and shortened, the attention line's points, edge cases (no static variables, one
// variable, NaN and infinite values, bytes XML cannot hold). Each case's SVG and JSON are also
// written to TFT_SVG_CASES, where check_interpretation_svg.py parses them as XML and measures
// the bars (ctest runs it after this test).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "report/interpretation_svg.h"
#include "report/svg_util.h"

#include "support/test_files.h"

#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;

namespace {

using tft::Interpretation;
using tft::VariableImportance;

// E encoder and P decoder positions, the attention rising towards the last encoder step and
// a fifth of it on decoder steps.
Interpretation make_case(std::int64_t e, std::int64_t p, std::vector<VariableImportance> statics,
                         std::vector<VariableImportance> encoder,
                         std::vector<VariableImportance> decoder) {
  Interpretation r;
  r.windows = 12;
  r.encoder_length = e;
  r.prediction_length = p;
  r.static_importance = std::move(statics);
  r.encoder_importance = std::move(encoder);
  r.decoder_importance = std::move(decoder);
  double encoder_sum = 0.0;
  for (std::int64_t k = 0; k < e; ++k) encoder_sum += static_cast<double>(k + 1);
  for (std::int64_t k = 0; k < e + p; ++k) {
    r.attention_by_position.push_back(k < e ? 0.8 * static_cast<double>(k + 1) / encoder_sum
                                            : 0.2 / static_cast<double>(p));
  }
  return r;
}

// Writes the case for check_interpretation_svg.py and returns its SVG.
std::string render(const std::string& name, const Interpretation& interpretation) {
  const fs::path dir = tft::testing::path_from_environment("TFT_SVG_CASES");
  fs::create_directories(dir);
  tft::write_interpretation_svg(dir / (name + ".svg"), interpretation);
  // Bytes that are not UTF-8 as U+FFFD, as in the SVG.
  tft::testing::write_text(dir / (name + ".json"),
                           interpretation.to_json().dump(
                               2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
                               "\n");
  const std::string svg = tft::testing::read_text(dir / (name + ".svg"));
  assert_true(svg == tft::interpretation_svg(interpretation));
  return svg;
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// The part of `svg` from <g id="id"> up to the next panel (or the end).
std::string panel(const std::string& svg, const std::string& id) {
  const std::size_t begin = svg.find("<g id=\"" + id + "\"");
  if (begin == std::string::npos) fail_msg("no panel %s", id.c_str());
  const std::size_t end = svg.find("<g id=\"", begin + 1);
  return svg.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// Every text between `open` and the next `close`, in order.
std::vector<std::string> between(const std::string& text, const std::string& open,
                                 const std::string& close) {
  std::vector<std::string> out;
  for (std::size_t at = text.find(open); at != std::string::npos; at = text.find(open, at)) {
    at += open.size();
    const std::size_t end = text.find(close, at);
    out.push_back(text.substr(at, end - at));
  }
  return out;
}

}  // namespace

TFT_TEST(test_four_panels_sorted_and_escaped) {
  const Interpretation in =
      make_case(7, 3, {{"region", 0.2}, {"a<b&\"c\"", 0.5}, {"kind", 0.3}},
                {{"price", 0.1}, {"volume", 0.4}, {"day", 0.15}, {"month", 0.35}},
                {{"day", 0.75}, {"month", 0.25}});
  const std::string svg = render("ordinary", in);
  assert_true(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  assert_true(svg.size() > 7 && svg.compare(svg.size() - 7, 7, "</svg>\n") == 0);
  for (const char* id :
       {"attention", "static_importance", "encoder_importance", "decoder_importance"}) {
    (void)panel(svg, id);
  }
  // Escaped wherever it appears: the name label and the tooltip.
  assert_false(contains(svg, "a<b&\"c\""));
  assert_true(contains(svg, ">a&lt;b&amp;&quot;c&quot;</text>"));
  assert_true(contains(svg, "<title>a&lt;b&amp;&quot;c&quot;: 50.0%</title>"));
  // Largest first, with percentages.
  const auto titles = [&](const char* id) {
    return between(panel(svg, id), "<title>", "</title>");
  };
  assert_true(titles("static_importance") ==
              (std::vector<std::string>{"a&lt;b&amp;&quot;c&quot;: 50.0%", "kind: 30.0%",
                                        "region: 20.0%"}));
  assert_true(
      titles("encoder_importance") ==
      (std::vector<std::string>{"volume: 40.0%", "month: 35.0%", "day: 15.0%", "price: 10.0%"}));
  assert_true(titles("decoder_importance") ==
              (std::vector<std::string>{"day: 75.0%", "month: 25.0%"}));
  // One line of 7 points, the encoder positions' share said.
  const std::vector<std::string> lines = between(panel(svg, "attention"), "points=\"", "\"");
  assert_int_equal(lines.size(), 1);
  assert_int_equal(std::count(lines[0].begin(), lines[0].end(), ','), 7);
  assert_true(contains(svg, "hold 80.0% of it"));
  assert_true(contains(svg, "(over 12 validation windows)"));
}

TFT_TEST(test_no_static_variables_and_one_variable) {
  const std::string svg =
      render("no_statics", make_case(1, 1, {}, {{"only", 1.0}}, {{"x", 0.0}, {"y", 0.0}}));
  const std::string statics = panel(svg, "static_importance");
  assert_true(contains(statics, ">no static variables</text>"));
  assert_false(contains(statics, "class=\"bar\""));
  assert_true(between(panel(svg, "encoder_importance"), "<title>", "</title>") ==
              std::vector<std::string>{"only: 100.0%"});
  // All zero: bars of no length, no division by zero.
  assert_true(between(panel(svg, "decoder_importance"), "<title>", "</title>") ==
              (std::vector<std::string>{"x: 0.0%", "y: 0.0%"}));
  assert_false(contains(svg, "nan"));
  // One encoder position: one point.
  const std::vector<std::string> lines = between(panel(svg, "attention"), "points=\"", "\"");
  assert_int_equal(lines.size(), 1);
  assert_int_equal(std::count(lines[0].begin(), lines[0].end(), ','), 1);
}

TFT_TEST(test_long_names_are_shortened) {
  const std::string long_name(80, 'n');
  std::string german;
  for (int i = 0; i < 10; ++i) german += "Gr\xC3\xB6\xC3\x9F";  // "Größ" x 10, two-byte letters
  const std::string svg = render("long_names", make_case(30, 5, {{long_name, 0.5}, {german, 0.5}},
                                                         {{"a", 1.0}}, {{"b", 1.0}}));
  // Cut to 31 characters and an ellipsis; the tooltip keeps the whole name.
  assert_true(contains(svg, ">" + std::string(31, 'n') + "\xE2\x80\xA6</text>"));
  assert_true(contains(svg, "<title>" + long_name + ": 50.0%</title>"));
  assert_true(contains(svg, ">" + german.substr(0, 7 * 6 + 4) + "\xE2\x80\xA6</text>"));
  assert_true(contains(svg, "<title>" + german + ": 50.0%</title>"));
  assert_string_equal(tft::svg::shorten("abc", 3).c_str(), "abc");
  assert_string_equal(tft::svg::shorten("abcd", 3).c_str(), "ab\xE2\x80\xA6");
}

TFT_TEST(test_non_finite_values_draw_no_nan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Interpretation in =
      make_case(12, 4, {{"s", 1.0}}, {{"broken", nan}, {"fine", 0.25}, {"huge", inf}, {"ok", 0.75}},
                {{"d", -inf}});
  in.attention_by_position[3] = nan;
  in.attention_by_position[13] = inf;
  const std::string svg = render("non_finite", in);
  assert_false(contains(svg, "nan"));
  assert_false(contains(svg, "inf"));
  assert_true(between(panel(svg, "encoder_importance"), "<title>", "</title>") ==
              (std::vector<std::string>{"ok: 75.0%", "fine: 25.0%", "broken: n/a", "huge: n/a"}));
  assert_true(contains(svg, ">2 non-finite importances shown as n/a</text>"));
  assert_true(
      contains(panel(svg, "decoder_importance"), ">1 non-finite importance shown as n/a</text>"));
  assert_true(contains(svg, ">2 non-finite values counted as 0</text>"));
  const std::vector<std::string> lines = between(panel(svg, "attention"), "points=\"", "\"");
  assert_int_equal(std::count(lines[0].begin(), lines[0].end(), ','), 12);
}

TFT_TEST(test_bytes_xml_cannot_hold) {
  const std::string replacement = "\xEF\xBF\xBD";
  assert_string_equal(tft::svg::xml_escape("a\x01"
                                           "b")
                          .c_str(),
                      ("a" + replacement + "b").c_str());
  assert_string_equal(tft::svg::xml_escape("\xFF"
                                           "x\xC3")
                          .c_str(),
                      (replacement + "x" + replacement).c_str());
  assert_string_equal(tft::svg::xml_escape("\xEF\xBF\xBF").c_str(), replacement.c_str());
  assert_string_equal(tft::svg::xml_escape("\xC3\xA9\t<>").c_str(), "\xC3\xA9\t&lt;&gt;");
  const std::string svg =
      render("odd_bytes", make_case(3, 2, {{"bell\x07", 0.5}, {"latin1 \xE9t\xE9", 0.5}},
                                    {{"tab\there", 1.0}}, {{"\xF0\x9F\x93\x88 chart", 1.0}}));
  assert_false(contains(svg, "\x07"));
  assert_true(contains(svg, "latin1 " + replacement + "t" + replacement));
  assert_true(contains(svg, "\xF0\x9F\x93\x88 chart"));
}

int main() {
  // No case left from an older build.
  fs::remove_all(tft::testing::path_from_environment("TFT_SVG_CASES"));
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_four_panels_sorted_and_escaped),
      cmocka_unit_test(test_no_static_variables_and_one_variable),
      cmocka_unit_test(test_long_names_are_shortened),
      cmocka_unit_test(test_non_finite_values_draw_no_nan),
      cmocka_unit_test(test_bytes_xml_cannot_hold),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
