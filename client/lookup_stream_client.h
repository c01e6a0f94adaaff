#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>

#include <grpcpp/channel.h>
#include <grpcpp/support/status.h>

#include "tiletune/v1/tiletune.grpc.pb.h"

namespace tiletune::client {

// Lookups on one LookupStream call, for a caller that asks the daemon often:
// each costs both sides about half of a Lookup call
// (bench/results/2026-12-02-lookup-stream.md). One lookup at a time: callers
// on several threads take turns, so give each busy thread its own. A lookup
// that runs past its deadline gives the stream up (its answer would come out
// of turn); the next lookup, as after any failure of the stream, opens a new
// one. No local cache and no fallback: TiletuneClient adds those to Lookup.
class LookupStreamClient {
 public:
  explicit LookupStreamClient(std::shared_ptr<grpc::Channel> channel,
                              std::chrono::milliseconds deadline = std::chrono::milliseconds(50));
  ~LookupStreamClient();
  LookupStreamClient(const LookupStreamClient&) = delete;
  LookupStreamClient& operator=(const LookupStreamClient&) = delete;

  // The daemon's answer in `response`, or why there is none: the lookup's
  // own error as Lookup would answer it (the stream goes on), the stream's
  // (UNAVAILABLE, ...), or DEADLINE_EXCEEDED past `deadline` (the
  // constructor's when absent).
  grpc::Status Lookup(const v1::LookupRequest& request, v1::LookupResponse& response,
                      std::optional<std::chrono::milliseconds> deadline = std::nullopt);

 private:
  class Stream;
  struct LiveStreams;

  // Under mu_: gives the stream up after a failed lookup; why it failed.
  grpc::Status GiveUp(std::chrono::steady_clock::time_point until);

  const std::unique_ptr<v1::TuningService::Stub> stub_;
  const std::chrono::milliseconds deadline_;
  const std::shared_ptr<LiveStreams> live_;
  std::mutex mu_;
  Stream* stream_ = nullptr;  // deletes itself once given up and ended
};

}  // namespace tiletune::client
