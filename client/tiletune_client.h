#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include "client/channel.h"
#include "client/lookup_cache.h"
#include "tiletune/v1/tiletune.grpc.pb.h"

namespace tiletune::client {

// How SubmitJob retries a call that may or may not have reached the daemon
// (UNAVAILABLE, DEADLINE_EXCEEDED). Every attempt carries the same
// request_id, so the daemon creates the job at most once.
struct SubmitRetryPolicy {
  int max_attempts = 5;  // the first call included; 1: no retry
  // The wait before the first retry, doubled before each next one up to
  // max_backoff.
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{2000};
  // Told before each retry: why the last attempt failed and the number of
  // the next one (2 for the first retry).
  std::function<void(const grpc::Status& failed, int next_attempt)> on_retry;
};

struct ClientOptions {
  // How long a lookup may take when the caller gives no deadline. Lookups sit
  // on an inference server's model-load or request path: better a vendor
  // kernel now than a tuned one late.
  std::chrono::milliseconds deadline{50};
  // Entries in the local cache; 0 turns it off.
  size_t cache_capacity = 4096;
  // How long the daemon's answers are reused. Misses expire sooner: the key
  // may be being tuned right now.
  std::chrono::milliseconds hit_ttl = std::chrono::seconds(60);
  std::chrono::milliseconds miss_ttl = std::chrono::seconds(5);
  // How long each SubmitJob attempt may take, and how failed ones are
  // retried.
  std::chrono::milliseconds submit_deadline = std::chrono::seconds(10);
  SubmitRetryPolicy submit_retry;
  ChannelOptions channel;
  LookupCache::Clock clock = std::chrono::steady_clock::now;
};

enum class AnswerSource {
  kCache,     // the local cache, from an earlier daemon answer
  kDaemon,    // tiletuned, just now
  kFallback,  // made up here: the daemon was unreachable, too slow or refused
};

struct LookupAnswer {
  v1::LookupResponse response;
  AnswerSource source = AnswerSource::kDaemon;
  // Why the answer is a fallback (OK otherwise), for the caller's logs.
  grpc::Status status;
};

// A new SubmitJobRequest.request_id: 128 random bits (std::random_device)
// as 32 hex digits.
std::string NewRequestId();

// Sends `request` over `stub`, first giving it NewRequestId() when its
// request_id is empty, and retries it per `policy` with that same id.
// `new_context` makes each attempt's context (and so its deadline). Returns
// the last attempt's status; `request` keeps the id that was sent.
grpc::Status SubmitJobWithRetries(
    v1::TuningService::Stub& stub, v1::SubmitJobRequest& request,
    const std::function<std::unique_ptr<grpc::ClientContext>()>& new_context,
    const SubmitRetryPolicy& policy, v1::SubmitJobResponse& response);

// The library inference servers link to ask tiletuned which kernel to run.
// No lookup throws on transport errors: when the daemon is down, slow or says
// no, the answer is a MISS whose fallback names the vendor library. Fallbacks
// are never cached, so the daemon is asked again on the next call.
// Thread-safe.
class TiletuneClient {
 public:
  explicit TiletuneClient(std::string address, ClientOptions options = {});

  // `deadline`: how long this call may take; options.deadline when absent.
  LookupAnswer Lookup(const v1::KernelKey& key, const v1::DeviceSelector& device = {},
                      std::optional<std::chrono::milliseconds> deadline = std::nullopt);
  // The full request, for tune_on_miss.
  LookupAnswer Lookup(const v1::LookupRequest& request,
                      std::optional<std::chrono::milliseconds> deadline = std::nullopt);

  // Answers in request order. Cached answers are served locally; the rest go
  // to the daemon in one BatchLookup call.
  std::vector<LookupAnswer> BatchLookup(
      const std::vector<v1::LookupRequest>& requests,
      std::optional<std::chrono::milliseconds> deadline = std::nullopt);

  // Queues a tuning job: SubmitJobWithRetries with options.submit_deadline
  // per attempt and options.submit_retry. An empty request_id gets a new
  // one, so that one call makes at most one job; give your own to make
  // several calls (across restarts of the caller) one job.
  grpc::Status SubmitJob(v1::SubmitJobRequest request, v1::SubmitJobResponse* response);

  const std::string& address() const { return address_; }

 private:
  LookupAnswer Fallback(const grpc::Status& status) const;
  void Remember(const std::string& cache_key, const v1::LookupResponse& response);
  void SetDeadline(grpc::ClientContext& context,
                   std::optional<std::chrono::milliseconds> deadline) const;

  std::string address_;
  ClientOptions options_;
  std::unique_ptr<v1::TuningService::Stub> stub_;
  LookupCache cache_;
};

}  // namespace tiletune::client
