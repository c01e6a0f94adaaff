#include "server/log_format.h"

#include <cstdio>

#include <spdlog/pattern_formatter.h>

namespace tiletune::server {
namespace {

constexpr char kTimePattern[] = "%Y-%m-%dT%H:%M:%S.%e%z";

bool IsKey(std::string_view word) {
  if (word.empty()) return false;
  for (char c : word) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// The length of the valid UTF-8 sequence `text` starts with; 0 when it
// does not start with one.
size_t Utf8Length(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (text.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

std::string_view Payload(const spdlog::details::log_msg& msg) {
  return {msg.payload.data(), msg.payload.size()};
}

void Append(std::string_view text, spdlog::memory_buf_t& dest) {
  dest.append(text.data(), text.data() + text.size());
}

class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    Append(JsonEscape(Payload(msg)), dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

class JsonFieldsFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string out = "{";
    for (const auto& [key, value] : LeadingFields(Payload(msg))) {
      if (out.size() > 1) out += ',';
      out += '"' + std::string(key) + "\":\"" + JsonEscape(value) + '"';
    }
    Append(out + '}', dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonFieldsFlag>();
  }
};

}  // namespace

std::unique_ptr<spdlog::formatter> MakeLogFormatter(std::string_view log_format) {
  if (log_format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<JsonMessageFlag>('*').add_flag<JsonFieldsFlag>('&');
    formatter->set_pattern(std::string("{\"time\":\"") + kTimePattern +
                           "\",\"level\":\"%l\",\"message\":\"%*\",\"fields\":%&}");
    return formatter;
  }
  // %^…%$: the level in colour when stderr is a terminal.
  return std::make_unique<spdlog::pattern_formatter>(std::string(kTimePattern) + " %^%l%$ %v");
}

std::vector<std::pair<std::string_view, std::string_view>> LeadingFields(std::string_view message) {
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  while (!message.empty()) {
    const size_t space = message.find(' ');
    std::string_view word = message.substr(0, space);
    const size_t equals = word.find('=');
    if (equals == std::string_view::npos || !IsKey(word.substr(0, equals))) break;
    const bool last = word.back() == ':';
    if (last) word.remove_suffix(1);
    if (equals + 1 == word.size()) break;  // "key=" says nothing
    fields.emplace_back(word.substr(0, equals), word.substr(equals + 1));
    if (last || space == std::string_view::npos) break;
    message.remove_prefix(space + 1);
  }
  return fields;
}

std::string JsonEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const char c = text[0];
    const size_t length = Utf8Length(text);
    if (length == 0) {
      out += "\\ufffd";  // not UTF-8: a JSON parser would refuse the line
      text.remove_prefix(1);
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(c));
      out += escaped;
    } else {
      out.append(text.data(), length);
    }
    text.remove_prefix(length);
  }
  return out;
}

}  // namespace tiletune::server
