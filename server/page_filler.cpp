#include "server/page_filler.h"

#include <algorithm>

#include <google/protobuf/io/coded_stream.h>

#include "server/message_text.h"

namespace tiletune::server {
namespace {

// Left for the page token and the framing of the response itself.
std::size_t Room(int max_message_bytes) {
  const auto bytes = static_cast<std::size_t>(max_message_bytes);
  return bytes - std::min<std::size_t>(64 << 10, bytes / 4);
}

// What the messages add to the response as entries of repeated fields: a
// tag (field numbers below 16), a length and the message.
std::size_t EntryBytes(std::initializer_list<google::protobuf::Message*> messages) {
  std::size_t bytes = 0;
  for (const auto* m : messages) {
    const std::size_t size = m->ByteSizeLong();
    bytes += 1 + google::protobuf::io::CodedOutputStream::VarintSize64(size) + size;
  }
  return bytes;
}

}  // namespace

std::size_t CutToFit(const DaemonConfig& config,
                     std::initializer_list<google::protobuf::Message*> messages) {
  const std::size_t bytes = EntryBytes(messages);
  if (bytes <= Room(config.max_message_bytes)) return bytes;
  for (auto* m : messages) TruncateLongText(*m, static_cast<std::size_t>(config.max_text_bytes));
  return EntryBytes(messages);
}

PageFiller::PageFiller(const DaemonConfig& config, const std::vector<std::string>& tokens_after,
                       const std::string& next_page_token)
    : config_(config),
      room_(Room(config.max_message_bytes)),
      tokens_after_(tokens_after),
      next_page_token_(&next_page_token) {}

bool PageFiller::Fits(std::size_t index,
                      std::initializer_list<google::protobuf::Message*> messages) {
  const std::size_t bytes = CutToFit(config_, messages);
  if (index > 0 && used_ + bytes > room_) {
    next_page_token_ = &tokens_after_[index - 1];
    return false;
  }
  used_ += bytes;
  return true;
}

}  // namespace tiletune::server
