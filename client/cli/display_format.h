#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <google/protobuf/map.h>
#include <google/protobuf/timestamp.pb.h>

namespace tiletune::cli {

// How numbers and times look in human output. A zero (never measured, never
// happened) shows as "-".

// `text` with line breaks (and the indentation after them) turned into one
// space: server messages may span lines, our output is one line per item.
std::string OneLine(std::string_view text);
// "1 record", "3 records".
std::string Counted(int64_t count, std::string_view noun);
// `text`, or "-" when it is empty.
std::string OrDash(const std::string& text);
// Microseconds with two decimals: "12.30".
std::string FormatMicros(double us);
// "1.80x".
std::string FormatSpeedup(double speedup);
// baseline / tuned, as FormatSpeedup; "-" unless both were measured.
std::string FormatSpeedup(double tuned_us, double baseline_us);
// "2024-05-01 12:00:05Z".
std::string FormatTimestamp(const google::protobuf::Timestamp& at);
// "bm=64,bn=32", sorted by name (proto maps have no order).
std::string FormatParams(const google::protobuf::Map<std::string, int64_t>& params);
// "512 MiB".
std::string FormatBytes(int64_t bytes);

}  // namespace tiletune::cli
