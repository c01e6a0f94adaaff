#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <spdlog/formatter.h>

namespace tiletune::server {

// How tiletuned writes its log lines (the `log_format` setting), both with
// the local time and its UTC offset (RFC 3339):
//   text: 2025-05-01T12:00:00.123+02:00 info job=3 item=0: tuning …
//   json: {"time":"2025-05-01T12:00:00.123+02:00","level":"info",
//          "message":"job=3 item=0: tuning …","fields":{"job":"3","item":"0"}}
// one JSON object a line, any byte sequence escaped to valid UTF-8.
std::unique_ptr<spdlog::formatter> MakeLogFormatter(std::string_view log_format);

// The key=value words a message starts with: the daemon's way of saying what
// a line is about ("job=3 item=0 device=cpu:0: tuning …" gives job, item and
// device; the ':' ending the last is not part of its value).
std::vector<std::pair<std::string_view, std::string_view>> LeadingFields(std::string_view message);

// `text` as the inside of a JSON string.
std::string JsonEscape(std::string_view text);

}  // namespace tiletune::server
