#include "client/cli/display_format.h"

#include <array>
#include <ctime>
#include <map>

#include <fmt/format.h>

namespace tiletune::cli {

std::string OneLine(std::string_view text) {
  std::string line;
  bool after_break = false;
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      after_break = true;
    } else if (after_break && (c == ' ' || c == '\t')) {
      continue;
    } else {
      if (after_break && !line.empty()) line += ' ';
      after_break = false;
      line += c;
    }
  }
  return line;
}

std::string Counted(int64_t count, std::string_view noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

std::string OrDash(const std::string& text) {
  return text.empty() ? "-" : text;
}

std::string FormatMicros(double us) {
  return us > 0 ? fmt::format("{:.2f}", us) : "-";
}

std::string FormatSpeedup(double speedup) {
  return speedup > 0 ? fmt::format("{:.2f}x", speedup) : "-";
}

std::string FormatSpeedup(double tuned_us, double baseline_us) {
  return tuned_us > 0 && baseline_us > 0 ? FormatSpeedup(baseline_us / tuned_us) : "-";
}

std::string FormatTimestamp(const google::protobuf::Timestamp& at) {
  if (at.seconds() == 0 && at.nanos() == 0) return "-";
  std::time_t seconds = static_cast<std::time_t>(at.seconds());
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%d %H:%M:%SZ", &utc);
  return text.data();
}

std::string FormatParams(const google::protobuf::Map<std::string, int64_t>& params) {
  if (params.empty()) return "-";
  std::map<std::string, int64_t> sorted(params.begin(), params.end());
  std::string text;
  for (const auto& [name, value] : sorted) {
    text += fmt::format("{}{}={}", text.empty() ? "" : ",", name, value);
  }
  return text;
}

std::string FormatBytes(int64_t bytes) {
  if (bytes <= 0) return "-";
  constexpr std::array kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < kUnits.size()) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.0f} {}", value, kUnits[unit]);
}

}  // namespace tiletune::cli
