#include "runtime/hip/msgpack_value.h"

#include <bit>
#include <stdexcept>

namespace tiletune::runtime::hip {
namespace {

// Metadata nests four levels deep; anything far deeper is not metadata.
constexpr int kMaxDepth = 64;

class MsgpackDecoder {
 public:
  explicit MsgpackDecoder(std::string_view bytes) : bytes_(bytes) {}

  MsgpackValue Value(int depth) {
    if (depth > kMaxDepth) Fail("nesting deeper than " + std::to_string(kMaxDepth));
    const uint8_t tag = Byte();
    MsgpackValue v;
    if (tag <= 0x7f) return Int(tag);
    if (tag >= 0xe0) return Int(static_cast<int8_t>(tag));
    if (tag >= 0x80 && tag <= 0x8f) return Map(tag & 0x0f, depth);
    if (tag >= 0x90 && tag <= 0x9f) return Array(tag & 0x0f, depth);
    if (tag >= 0xa0 && tag <= 0xbf) return String(tag & 0x1f);
    switch (tag) {
      case 0xc0: return v;
      case 0xc2:
      case 0xc3:
        v.kind = MsgpackValue::Kind::kBool;
        v.boolean = tag == 0xc3;
        return v;
      case 0xc4: return String(Unsigned(1));
      case 0xc5: return String(Unsigned(2));
      case 0xc6: return String(Unsigned(4));
      case 0xca: return Float(std::bit_cast<float>(static_cast<uint32_t>(Unsigned(4))));
      case 0xcb: return Float(std::bit_cast<double>(Unsigned(8)));
      case 0xcc: return Int(static_cast<int64_t>(Unsigned(1)));
      case 0xcd: return Int(static_cast<int64_t>(Unsigned(2)));
      case 0xce: return Int(static_cast<int64_t>(Unsigned(4)));
      case 0xcf: return Int(static_cast<int64_t>(Unsigned(8)));
      case 0xd0: return Int(static_cast<int8_t>(Unsigned(1)));
      case 0xd1: return Int(static_cast<int16_t>(Unsigned(2)));
      case 0xd2: return Int(static_cast<int32_t>(Unsigned(4)));
      case 0xd3: return Int(static_cast<int64_t>(Unsigned(8)));
      case 0xd9: return String(Unsigned(1));
      case 0xda: return String(Unsigned(2));
      case 0xdb: return String(Unsigned(4));
      case 0xdc: return Array(Unsigned(2), depth);
      case 0xdd: return Array(Unsigned(4), depth);
      case 0xde: return Map(Unsigned(2), depth);
      case 0xdf: return Map(Unsigned(4), depth);
      default: Fail("unsupported type byte " + std::to_string(tag));
    }
  }

  bool AtEnd() const { return offset_ == bytes_.size(); }
  size_t offset() const { return offset_; }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw std::runtime_error("msgpack at byte " + std::to_string(offset_) + ": " + what);
  }

  void Need(uint64_t n) const {
    if (n > bytes_.size() - offset_) Fail("truncated (" + std::to_string(n) + " bytes needed)");
  }

  uint8_t Byte() {
    Need(1);
    return static_cast<uint8_t>(bytes_[offset_++]);
  }

  // A big-endian unsigned integer of `n` bytes.
  uint64_t Unsigned(int n) {
    Need(n);
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = v << 8 | static_cast<uint8_t>(bytes_[offset_++]);
    return v;
  }

  static MsgpackValue Int(int64_t i) {
    MsgpackValue v;
    v.kind = MsgpackValue::Kind::kInt;
    v.integer = i;
    return v;
  }

  static MsgpackValue Float(double d) {
    MsgpackValue v;
    v.kind = MsgpackValue::Kind::kFloat;
    v.real = d;
    return v;
  }

  MsgpackValue String(uint64_t length) {
    Need(length);
    MsgpackValue v;
    v.kind = MsgpackValue::Kind::kString;
    v.text.assign(bytes_.substr(offset_, length));
    offset_ += length;
    return v;
  }

  // Every element takes at least one byte: a count past the remaining bytes
  // is malformed, and checking it first bounds the allocation.
  MsgpackValue Array(uint64_t count, int depth) {
    Need(count);
    MsgpackValue v;
    v.kind = MsgpackValue::Kind::kArray;
    v.items.reserve(count);
    for (uint64_t i = 0; i < count; ++i) v.items.push_back(Value(depth + 1));
    return v;
  }

  MsgpackValue Map(uint64_t count, int depth) {
    Need(count);
    MsgpackValue v;
    v.kind = MsgpackValue::Kind::kMap;
    v.map.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      MsgpackValue key = Value(depth + 1);
      v.map.push_back({std::move(key), Value(depth + 1)});
    }
    return v;
  }

  std::string_view bytes_;
  size_t offset_ = 0;
};

}  // namespace

const MsgpackValue* MsgpackValue::Find(std::string_view key) const {
  for (const auto& [k, v] : map) {
    if (k.kind == Kind::kString && k.text == key) return &v;
  }
  return nullptr;
}

MsgpackValue DecodeMsgpack(std::string_view bytes) {
  MsgpackDecoder decoder(bytes);
  MsgpackValue value = decoder.Value(0);
  if (!decoder.AtEnd()) {
    throw std::runtime_error("msgpack: " + std::to_string(bytes.size() - decoder.offset()) +
                             " bytes after the value");
  }
  return value;
}

}  // namespace tiletune::runtime::hip
