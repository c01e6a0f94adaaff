#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tiletune::runtime::hip {

// One decoded MessagePack value: the format of AMD GPU code object metadata
// (code object v3 and later). Only what that metadata uses is kept: nil,
// booleans, integers, floats, strings, arrays and maps; binary data is read
// as a string.
struct MsgpackEntry;

struct MsgpackValue {
  enum class Kind { kNil, kBool, kInt, kFloat, kString, kArray, kMap };
  Kind kind = Kind::kNil;
  bool boolean = false;
  int64_t integer = 0;  // unsigned values past INT64_MAX do not occur in metadata
  double real = 0;
  std::string text;
  std::vector<MsgpackValue> items;  // kArray
  std::vector<MsgpackEntry> map;    // kMap, in document order

  // The value under string key `key` of a map, or nullptr.
  const MsgpackValue* Find(std::string_view key) const;
};

// A map's key and value: a struct, not a std::pair, because clang with
// libstdc++ rejects a pair of a type that is still incomplete (the fuzz
// build compiles this with clang).
struct MsgpackEntry {
  MsgpackValue key;
  MsgpackValue value;
};

// Decodes one value that fills `bytes`. Throws std::runtime_error naming the
// offset of a truncated, unsupported or trailing byte.
MsgpackValue DecodeMsgpack(std::string_view bytes);

}  // namespace tiletune::runtime::hip
