#include "bench/service/lookup_load.h"

#include <condition_variable>
#include <memory>
#include <mutex>

#include <grpcpp/client_context.h>

namespace tiletune::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

// One client's chain of calls. Only the callback of its current call touches
// it, so it needs no lock; gRPC orders each callback after the call's start.
struct Client {
  size_t next_key = 0;
  std::unique_ptr<grpc::ClientContext> context;
  v1::LookupResponse response;
  SteadyClock::time_point started;
  std::vector<double> latencies_ms;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t errors = 0;
  std::string first_error;
};

class LookupLoad {
 public:
  LookupLoad(v1::TuningService::Stub& stub, const std::vector<v1::LookupRequest>& requests,
             const LoadOptions& options)
      : stub_(stub), requests_(requests), options_(options), clients_(options.clients) {}

  LoadResult Run() {
    start_ = SteadyClock::now();
    end_ = start_ + std::chrono::duration_cast<SteadyClock::duration>(options_.duration);
    running_ = clients_.size();
    for (size_t i = 0; i < clients_.size(); ++i) {
      clients_[i].next_key = i % requests_.size();
      Start(clients_[i]);
    }
    std::unique_lock lock(mutex_);
    all_done_.wait(lock, [this] { return running_ == 0; });
    return Collect();
  }

 private:
  void Start(Client& client) {
    client.context = std::make_unique<grpc::ClientContext>();
    client.context->set_deadline(std::chrono::system_clock::now() + options_.call_deadline);
    client.response.Clear();
    const v1::LookupRequest& request = requests_[client.next_key];
    client.next_key = (client.next_key + 1) % requests_.size();
    client.started = SteadyClock::now();
    stub_.async()->Lookup(client.context.get(), &request, &client.response,
                          [this, &client](grpc::Status status) { Finish(client, status); });
  }

  void Finish(Client& client, const grpc::Status& status) {
    auto now = SteadyClock::now();
    if (status.ok()) {
      client.latencies_ms.push_back(
          std::chrono::duration<double, std::milli>(now - client.started).count());
      bool hit = client.response.result() == v1::LookupResponse::RESULT_HIT;
      ++(hit ? client.hits : client.misses);
    } else {
      ++client.errors;
      if (client.first_error.empty()) client.first_error = status.error_message();
    }
    if (now < end_) {
      Start(client);
      return;
    }
    std::lock_guard lock(mutex_);
    last_finish_ = std::max(last_finish_, now);
    if (--running_ == 0) all_done_.notify_one();
  }

  LoadResult Collect() {
    LoadResult result;
    std::vector<double> latencies;
    for (auto& client : clients_) {
      result.hits += client.hits;
      result.misses += client.misses;
      result.errors += client.errors;
      if (result.first_error.empty()) result.first_error = client.first_error;
      latencies.insert(latencies.end(), client.latencies_ms.begin(), client.latencies_ms.end());
    }
    result.elapsed_seconds = std::chrono::duration<double>(last_finish_ - start_).count();
    result.latency = SummarizeLatencies(latencies);
    return result;
  }

  v1::TuningService::Stub& stub_;
  const std::vector<v1::LookupRequest>& requests_;
  const LoadOptions& options_;
  std::vector<Client> clients_;
  SteadyClock::time_point start_;
  SteadyClock::time_point end_;
  std::mutex mutex_;
  std::condition_variable all_done_;
  size_t running_ = 0;
  SteadyClock::time_point last_finish_;
};

}  // namespace

LoadResult RunLookupLoad(v1::TuningService::Stub& stub,
                         const std::vector<v1::LookupRequest>& requests,
                         const LoadOptions& options) {
  if (requests.empty() || options.clients == 0) return {};
  return LookupLoad(stub, requests, options).Run();
}

}  // namespace tiletune::bench
