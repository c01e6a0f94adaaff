#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tiletune::cli {

// Columns aligned by the widest cell, two spaces apart, header first.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> headers);

  // A row with fewer cells than headers is padded with empty cells.
  void AddRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }

  void Print(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// Terminal columns `text` takes: UTF-8 code points, so "µs" counts 2.
size_t DisplayWidth(std::string_view text);

// `text` cut to at most `width` columns, on a code point boundary.
std::string TruncateToWidth(std::string_view text, size_t width);

}  // namespace tiletune::cli
