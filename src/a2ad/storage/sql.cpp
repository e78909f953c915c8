// See sql.hpp.
#include "a2ad/storage/sql.hpp"

#include <charconv>

namespace a2ad::storage::sql {

std::string_view Rows::Text(int row, int col) const {
  const Cell& c = cells_[Index(row, col)];
  return std::string_view(text_).substr(c.offset, c.size);
}

int64_t Rows::Int(int row, int col) const {
  const std::string_view t = Text(row, col);
  int64_t v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}

void Rows::Add(const char* data, size_t size) {
  if (data == nullptr) return AddNull();
  cells_.push_back(Cell{text_.size(), size, false});
  text_.append(data, size);
}

void Rows::AddNull() { cells_.push_back(Cell{text_.size(), 0, true}); }

}  // namespace a2ad::storage::sql
