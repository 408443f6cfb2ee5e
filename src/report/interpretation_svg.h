// interpretation.svg: interpretation.json drawn as pytorch-forecasting's plot_interpretation
// draws it, as one hand-written SVG (no plotting dependency) of four panels, top to bottom,
// each a <g id="..."> of that name:
//   - attention: the mean attention by encoder position (-encoder_length ... -1, relative to
//     the first forecast step) as a line, renormalised to sum to 1 over the encoder positions
//     as plot_interpretation does; a note says what share of all the attention the encoder
//     positions hold (the rest falls on decoder steps);
//   - static_importance, encoder_importance, decoder_importance: one horizontal bar per input,
//     its importance in percent of its group, largest first (ties in schema order), the bar's
//     length proportional to it. A group without inputs keeps its panel, with a note
//     ("no static variables").
// Names longer than max_name_chars are cut with an ellipsis; each bar's <title> (a tooltip)
// holds the full name and its percentage. Any name gives a well-formed file (svg_util.h).
// Non-finite values (the trainer stops on NaN, so they come only from a damaged model) draw
// no NaN: an importance that is NaN or infinite gets no bar, the label "n/a", a place after the
// others and no share of the percentages; an attention value that is not finite counts as 0;
// the panel's title line says how many there were.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "report/interpretation.h"

namespace tft {

struct InterpretationPlotOptions {
  int width = 960;
  std::size_t max_name_chars = 32;
  std::string title = "Interpretation";
};

std::string interpretation_svg(const Interpretation& interpretation,
                               const InterpretationPlotOptions& options = {});

void write_interpretation_svg(const std::filesystem::path& path,
                              const Interpretation& interpretation,
                              const InterpretationPlotOptions& options = {});

// The run's two interpretation files: `directory`/interpretation.json (Interpretation::to_json)
// and `directory`/interpretation.svg.
void write_interpretation_files(const std::filesystem::path& directory,
                                const Interpretation& interpretation);

}  // namespace tft
