#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tiletune::cli {

// Columns aligned by the widest cell, two spaces apart, header first.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> headers);

  // A row with fewer cells than headers is padded with empty cells.
  void AddRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }

  // How the table gives way when it is wider than Print's `max_width`, in
  // the order of these calls, until it fits: a cut column's long cells end
  // in "…" (the column keeps at least `min_width` and its header), a
  // dropped column goes. What still does not fit then wraps.
  void CutToFit(std::string_view header, size_t min_width);
  void DropToFit(std::string_view header);

  // nullopt: every cell whole (--wide, or output that is not a terminal).
  void Print(std::ostream& out, std::optional<size_t> max_width = std::nullopt) const;

 private:
  struct GiveWay {
    size_t column;
    size_t min_width;  // kept by a cut
    bool drop;
  };
  size_t Column(std::string_view header) const;

  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<GiveWay> give_way_;
};

// The columns output to `fd` may take: COLUMNS when it is set to a number
// (the user asked), else the terminal's width when `fd` is a terminal, else
// nullopt: piped output keeps whole lines, for grep, awk and cut.
std::optional<size_t> OutputColumns(int fd);

// Terminal columns `text` takes: UTF-8 code points, so "µs" counts 2.
size_t DisplayWidth(std::string_view text);

// `text` cut to at most `width` columns, on a code point boundary.
std::string TruncateToWidth(std::string_view text, size_t width);

}  // namespace tiletune::cli
