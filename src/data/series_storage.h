// Series-contiguous storage: the columns of rows read in file order (row_reader.h) reordered
// so that each series' rows follow each other, series in order of first appearance, rows of a
// series in file order; each series gets its offset.
#pragma once

#include "data/row_reader.h"

namespace tft {

// Sets every series' offset, reorders the columns of `rows` when its series interleave, frees
// row_series and trims the columns' spare capacity.
void store_by_series(LoadedRows& rows);

}  // namespace tft
