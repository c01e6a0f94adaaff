#include "db/page_token.h"

#include <charconv>
#include <string_view>

#include "db/tuning_store.h"

namespace tiletune::db {
namespace {

constexpr std::string_view kHexDigits = "0123456789abcdef";

[[noreturn]] void Invalid() {
  throw InvalidPageToken("not a token returned by a previous page of this listing");
}

std::string Hex(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kHexDigits[c >> 4];
    out += kHexDigits[c & 0xf];
  }
  return out;
}

std::string Unhex(std::string_view hex) {
  if (hex.size() % 2 != 0) Invalid();
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    auto high = kHexDigits.find(hex[i]);
    auto low = kHexDigits.find(hex[i + 1]);
    if (high == std::string_view::npos || low == std::string_view::npos) Invalid();
    out += static_cast<char>(high << 4 | low);
  }
  return out;
}

}  // namespace

// Each field is written as "<length>:<bytes>" so fields may hold any byte.
std::string EncodePageToken(const std::vector<std::string>& sort_key) {
  std::string plain;
  for (const auto& field : sort_key) plain += std::to_string(field.size()) + ":" + field;
  return Hex(plain);
}

std::vector<std::string> DecodePageToken(const std::string& token, std::size_t fields) {
  std::string plain = Unhex(token);
  std::string_view rest = plain;
  std::vector<std::string> sort_key;
  while (!rest.empty()) {
    std::size_t length = 0;
    auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), length);
    if (error != std::errc() || end == rest.data() + rest.size() || *end != ':') Invalid();
    rest.remove_prefix(end - rest.data() + 1);
    if (length > rest.size()) Invalid();
    sort_key.emplace_back(rest.substr(0, length));
    rest.remove_prefix(length);
  }
  if (sort_key.size() != fields) Invalid();
  return sort_key;
}

int64_t PageTokenInt(const std::string& field) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size()) Invalid();
  return value;
}

int EffectivePageSize(int requested) {
  if (requested <= 0) return kDefaultPageSize;
  return requested > kMaxPageSize ? kMaxPageSize : requested;
}

}  // namespace tiletune::db
