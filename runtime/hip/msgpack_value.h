#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tiletune::runtime::hip {

// One decoded MessagePack value: the format of AMD GPU code object metadata
// (code object v3 and later). Only what that metadata uses is kept: nil,
// booleans, integers, floats, strings, arrays and maps; binary data is read
// as a string.
struct MsgpackValue {
  enum class Kind { kNil, kBool, kInt, kFloat, kString, kArray, kMap };
  Kind kind = Kind::kNil;
  bool boolean = false;
  int64_t integer = 0;  // unsigned values past INT64_MAX do not occur in metadata
  double real = 0;
  std::string text;
  std::vector<MsgpackValue> items;                         // kArray
  std::vector<std::pair<MsgpackValue, MsgpackValue>> map;  // kMap, in document order

  // The value under string key `key` of a map, or nullptr.
  const MsgpackValue* Find(std::string_view key) const;
};

// Decodes one value that fills `bytes`. Throws std::runtime_error naming the
// offset of a truncated, unsupported or trailing byte.
MsgpackValue DecodeMsgpack(std::string_view bytes);

}  // namespace tiletune::runtime::hip
