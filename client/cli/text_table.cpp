#include "client/cli/text_table.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace tiletune::cli {
namespace {

bool IsContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// `text` in at most `width` columns, ending in "…" when it was cut.
std::string CutToWidth(const std::string& text, size_t width) {
  if (DisplayWidth(text) <= width) return text;
  return TruncateToWidth(text, width > 0 ? width - 1 : 0) + "…";
}

}  // namespace

TextTable::TextTable(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(std::max(cells.size(), headers_.size()));
  rows_.push_back(std::move(cells));
}

size_t TextTable::Column(std::string_view header) const {
  const auto it = std::find(headers_.begin(), headers_.end(), header);
  if (it == headers_.end()) throw std::logic_error("no table column " + std::string(header));
  return static_cast<size_t>(it - headers_.begin());
}

void TextTable::CutToFit(std::string_view header, size_t min_width) {
  const size_t column = Column(header);
  give_way_.push_back(
      {.column = column, .min_width = std::max(min_width, DisplayWidth(header)), .drop = false});
}

void TextTable::DropToFit(std::string_view header) {
  give_way_.push_back({.column = Column(header), .min_width = 0, .drop = true});
}

void TextTable::Print(std::ostream& out, std::optional<size_t> max_width) const {
  std::vector<size_t> widths(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) widths[c] = DisplayWidth(headers_[c]);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < headers_.size(); ++c) {
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
    }
  }
  std::vector<bool> shown(headers_.size(), true);
  auto total = [&] {
    size_t sum = 0;
    size_t columns = 0;
    for (size_t c = 0; c < headers_.size(); ++c) {
      if (shown[c]) sum += widths[c], ++columns;
    }
    return sum + (columns > 0 ? 2 * (columns - 1) : 0);
  };
  for (const GiveWay& way : give_way_) {
    if (!max_width || total() <= *max_width) break;
    if (way.drop) {
      shown[way.column] = false;
    } else if (widths[way.column] > way.min_width) {
      const size_t excess = total() - *max_width;
      widths[way.column] -= std::min(excess, widths[way.column] - way.min_width);
    }
  }
  auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < headers_.size(); ++c) {
      if (!shown[c]) continue;
      if (!line.empty()) line += "  ";
      const std::string cell = CutToWidth(cells[c], widths[c]);
      line += cell;
      line += std::string(widths[c] - DisplayWidth(cell), ' ');
    }
    // No padding after the last column.
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  };
  print_row(headers_);
  for (const auto& row : rows_) print_row(row);
}

std::optional<size_t> OutputColumns(int fd) {
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && *columns != '\0') {
    size_t value = 0;
    const char* end = columns + std::strlen(columns);
    if (auto [at, error] = std::from_chars(columns, end, value);
        error == std::errc() && at == end && value > 0) {
      return value;
    }
  }
  winsize size{};
  if (isatty(fd) == 1 && ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return size.ws_col;
  }
  return std::nullopt;
}

size_t DisplayWidth(std::string_view text) {
  return static_cast<size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return !IsContinuationByte(c); }));
}

std::string TruncateToWidth(std::string_view text, size_t width) {
  size_t columns = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (!IsContinuationByte(text[i]) && columns++ == width) return std::string(text.substr(0, i));
  }
  return std::string(text);
}

}  // namespace tiletune::cli
