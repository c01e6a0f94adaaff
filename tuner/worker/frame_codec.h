#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <google/protobuf/message_lite.h>

namespace tiletune::tuner {

// Framing of the tuner <-> tiletune-worker pipes: a 4-byte little-endian
// length, then one serialized message.
inline constexpr size_t kMaxFrameBytes = size_t{64} << 20;

std::string EncodeFrame(const google::protobuf::MessageLite& message);

// Reassembles frames from bytes as they arrive.
class FrameReader {
 public:
  void Append(const char* data, size_t size) { buffer_.append(data, size); }
  // The payload of the next complete frame, or nullopt until one is
  // complete. Throws std::runtime_error for a length over kMaxFrameBytes
  // (the stream is out of step and cannot recover).
  std::optional<std::string> Next();

 private:
  std::string buffer_;
};

enum class WriteOutcome { kDone, kBroken, kGaveUp };

// Writes all of `data` to `fd`. When a non-blocking fd is full, waits up to
// 50 ms at a time for room and asks `keep_waiting` whether to go on.
// kBroken: the reader is gone (EPIPE) or the fd failed.
WriteOutcome WriteAll(int fd, std::string_view data, const std::function<bool()>& keep_waiting);

}  // namespace tiletune::tuner
