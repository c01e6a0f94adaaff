#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tiletune::runtime {

// SHA-256, for cache keys and source hashes: stable across builds and
// machines, and collisions are not a concern.
class ContentHasher {
 public:
  ContentHasher();
  ContentHasher& Update(std::string_view data);
  // Hashes the length before the bytes, so that a sequence of fields has one
  // reading ("ab","c" and "a","bc" differ).
  ContentHasher& UpdateField(std::string_view field);
  // Lower-case hex of the digest; the hasher is spent afterwards.
  std::string HexDigest();

 private:
  void Block(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// Hex SHA-256 of `text`.
std::string ContentHash(std::string_view text);

}  // namespace tiletune::runtime
