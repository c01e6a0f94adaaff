// Answers filled from the store up to what one gRPC message may carry, so
// that nothing stored, however big, makes a call fail: list pages
// (ListJobs, ListRecords) by PageFiller, single answers and stream messages
// (GetJob, WatchJob, ExportRecords) by CutToFit.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "server/daemon_config.h"

namespace tiletune::server {

// Cuts the long free text of `messages`, which go in one answer together,
// to max_text_bytes when they would take it past max_message_bytes (less a
// margin for the rest of it): what was stored before the limits on text,
// or by another daemon, is answered shortened rather than failing every
// call that reads it. Returns the bytes they then add to the answer.
std::size_t CutToFit(const DaemonConfig& config,
                     std::initializer_list<google::protobuf::Message*> messages);

class PageFiller {
 public:
  // `tokens_after` and `next_page_token` are the store page's (JobPage,
  // RecordPage); they must outlive the filler.
  PageFiller(const DaemonConfig& config, const std::vector<std::string>& tokens_after,
             const std::string& next_page_token);

  // Whether entry `index` of the page, made of `messages` in the response,
  // still goes in: false once it would take the response past
  // max_message_bytes (less a margin for the rest of it). The first entry
  // always goes in, its long free text cut to max_text_bytes when it alone
  // is too big.
  bool Fits(std::size_t index, std::initializer_list<google::protobuf::Message*> messages);

  // The response's next_page_token: the store's, or where the next page
  // starts when an entry did not fit.
  const std::string& next_page_token() const { return *next_page_token_; }

 private:
  const DaemonConfig& config_;
  const std::size_t room_;
  const std::vector<std::string>& tokens_after_;
  const std::string* next_page_token_;
  std::size_t used_ = 0;
};

}  // namespace tiletune::server
