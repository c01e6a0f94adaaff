#include "frame_codec.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <stdexcept>

namespace tiletune::tuner {

std::string EncodeFrame(const google::protobuf::MessageLite& message) {
  const std::string payload = message.SerializeAsString();
  const auto size = static_cast<uint32_t>(payload.size());
  std::string frame;
  for (int i = 0; i < 4; ++i) frame += static_cast<char>((size >> (8 * i)) & 0xff);
  return frame + payload;
}

std::optional<std::string> FrameReader::Next() {
  if (buffer_.size() < 4) return std::nullopt;
  uint32_t size = 0;
  for (int i = 0; i < 4; ++i) size |= uint32_t{static_cast<uint8_t>(buffer_[i])} << (8 * i);
  if (size > kMaxFrameBytes) {
    throw std::runtime_error("frame of " + std::to_string(size) + " bytes exceeds the limit of " +
                             std::to_string(kMaxFrameBytes));
  }
  if (buffer_.size() < 4 + size_t{size}) return std::nullopt;
  std::string payload = buffer_.substr(4, size);
  buffer_.erase(0, 4 + size_t{size});
  return payload;
}

WriteOutcome WriteAll(int fd, std::string_view data, const std::function<bool()>& keep_waiting) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n >= 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 50);
      if (!keep_waiting()) return WriteOutcome::kGaveUp;
    } else if (errno != EINTR) {
      return WriteOutcome::kBroken;
    }
  }
  return WriteOutcome::kDone;
}

}  // namespace tiletune::tuner
