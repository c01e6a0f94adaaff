#include "bench/service/lookup_load.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

#include <grpcpp/client_context.h>

namespace tiletune::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

// One client's chain of lookups. Only the callback of its current lookup
// touches it, so it needs no lock; gRPC orders each callback after the
// lookup's start.
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

// Records one answered lookup (or its failure) in `client`.
void Record(Client& client, const grpc::Status& status, const v1::LookupResponse& response,
            SteadyClock::time_point now) {
  if (status.ok()) {
    client.latencies_ms.push_back(
        std::chrono::duration<double, std::milli>(now - client.started).count());
    ++(response.result() == v1::LookupResponse::RESULT_HIT ? client.hits : client.misses);
  } else {
    ++client.errors;
    if (client.first_error.empty()) client.first_error = status.error_message();
  }
}

// One client's LookupStream: a request is written and its answer read
// before the next request goes, so one lookup is in flight, as with calls.
class StreamClient final
    : public grpc::ClientBidiReactor<v1::LookupRequest, v1::LookupStreamResponse> {
 public:
  StreamClient(Client& client, const std::vector<v1::LookupRequest>& requests,
               SteadyClock::time_point end, std::function<void(SteadyClock::time_point)> done)
      : client_(client), requests_(requests), end_(end), done_(std::move(done)) {}

  // `deadline`: of the whole stream.
  void Start(v1::TuningService::Stub& stub, std::chrono::system_clock::time_point deadline) {
    context_.set_deadline(deadline);
    stub.async()->LookupStream(&context_, this);
    StartCall();
    Next();
  }

  void OnWriteDone(bool ok) override {
    if (ok) Step();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ended: OnDone says why
    const grpc::Status status(static_cast<grpc::StatusCode>(answer_.code()), answer_.message());
    Record(client_, status, answer_.response(), SteadyClock::now());
    Step();
  }
  void OnDone(const grpc::Status& status) override {
    if (!status.ok()) Record(client_, status, {}, SteadyClock::now());
    done_(last_answer_);
  }

 private:
  // The next lookup, once both halves of the last one are done.
  void Next() {
    pending_ = 2;
    answer_.Clear();
    const v1::LookupRequest& request = requests_[client_.next_key];
    client_.next_key = (client_.next_key + 1) % requests_.size();
    client_.started = SteadyClock::now();
    StartWrite(&request);
    StartRead(&answer_);
  }
  void Step() {
    if (--pending_ > 0) return;
    last_answer_ = SteadyClock::now();
    if (last_answer_ < end_) {
      Next();
    } else {
      StartWritesDone();
      StartRead(&answer_);  // sees the end of the stream
    }
  }

  Client& client_;
  const std::vector<v1::LookupRequest>& requests_;
  const SteadyClock::time_point end_;
  const std::function<void(SteadyClock::time_point)> done_;
  grpc::ClientContext context_;
  v1::LookupStreamResponse answer_;
  std::atomic<int> pending_ = 0;  // a write's and a read's callbacks may race
  SteadyClock::time_point last_answer_;
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
    for (size_t i = 0; i < clients_.size(); ++i) clients_[i].next_key = i % requests_.size();
    for (auto& client : clients_) {
      if (!options_.stream) {
        Start(client);
        continue;
      }
      streams_.push_back(std::make_unique<StreamClient>(
          client, requests_, end_, [this](SteadyClock::time_point last) { Ended(last); }));
      streams_.back()->Start(
          stub_, std::chrono::system_clock::now() +
                     std::chrono::duration_cast<std::chrono::milliseconds>(options_.duration) +
                     options_.call_deadline);
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
    Record(client, status, client.response, now);
    if (now < end_) {
      Start(client);
      return;
    }
    Ended(now);
  }

  // A client is done; `last` is when its last lookup was answered.
  void Ended(SteadyClock::time_point last) {
    std::lock_guard lock(mutex_);
    last_finish_ = std::max(last_finish_, last);
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
  std::vector<std::unique_ptr<StreamClient>> streams_;
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
