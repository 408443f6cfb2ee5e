#include "readers/row_source.h"

namespace tft {

bool CsvRowSource::next(std::vector<Cell>& cells, std::size_t& position) {
  if (!reader_.next(fields_, position)) return false;
  cells.resize(fields_.size());
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    cells[i].kind = Cell::Kind::Text;
    cells[i].text = fields_[i];
  }
  return true;
}

}  // namespace tft
