#include "client/tiletune_client.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <thread>

namespace tiletune::client {
namespace {

// The calls whose outcome the client cannot know: the daemon may have
// created the job, or never seen the call.
bool MayRetry(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

// The daemon's answers are looked up again by the request bytes. An empty
// device selector asks the same as none, but serializes differently.
std::string CacheKey(const v1::LookupRequest& request) {
  std::string key;
  if (request.has_device() && request.device().ByteSizeLong() == 0) {
    v1::LookupRequest without_device = request;
    without_device.clear_device();
    without_device.SerializeToString(&key);
  } else {
    request.SerializeToString(&key);
  }
  return key;
}

}  // namespace

std::string NewRequestId() {
  std::random_device entropy;
  std::string id;
  for (int i = 0; i < 4; ++i) {
    char word[9];
    std::snprintf(word, sizeof(word), "%08x", static_cast<unsigned>(entropy()));
    id += word;
  }
  return id;
}

grpc::Status SubmitJobWithRetries(
    v1::TuningService::Stub& stub, v1::SubmitJobRequest& request,
    const std::function<std::unique_ptr<grpc::ClientContext>()>& new_context,
    const SubmitRetryPolicy& policy, v1::SubmitJobResponse& response) {
  if (request.request_id().empty()) request.set_request_id(NewRequestId());
  auto backoff = policy.initial_backoff;
  for (int attempt = 1;; ++attempt) {
    response.Clear();
    const auto context = new_context();
    grpc::Status status = stub.SubmitJob(context.get(), request, &response);
    if (!MayRetry(status) || attempt >= policy.max_attempts) return status;
    if (policy.on_retry) policy.on_retry(status, attempt + 1);
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, policy.max_backoff);
  }
}

TiletuneClient::TiletuneClient(std::string address, ClientOptions options)
    : address_(std::move(address)),
      options_(std::move(options)),
      stub_(v1::TuningService::NewStub(MakeChannel(address_, options_.channel))),
      cache_(options_.cache_capacity, options_.clock) {}

LookupAnswer TiletuneClient::Lookup(const v1::KernelKey& key, const v1::DeviceSelector& device,
                                    std::optional<std::chrono::milliseconds> deadline) {
  v1::LookupRequest request;
  *request.mutable_key() = key;
  *request.mutable_device() = device;
  return Lookup(request, deadline);
}

LookupAnswer TiletuneClient::Lookup(const v1::LookupRequest& request,
                                    std::optional<std::chrono::milliseconds> deadline) {
  std::string cache_key = CacheKey(request);
  if (auto cached = cache_.Get(cache_key)) return {std::move(*cached), AnswerSource::kCache, {}};
  grpc::ClientContext context;
  SetDeadline(context, deadline);
  LookupAnswer answer;
  grpc::Status status = stub_->Lookup(&context, request, &answer.response);
  if (!status.ok()) return Fallback(status);
  Remember(cache_key, answer.response);
  return answer;
}

std::vector<LookupAnswer> TiletuneClient::BatchLookup(
    const std::vector<v1::LookupRequest>& requests,
    std::optional<std::chrono::milliseconds> deadline) {
  std::vector<LookupAnswer> answers(requests.size());
  std::vector<size_t> asked;  // indexes of the requests sent to the daemon
  std::vector<std::string> cache_keys(requests.size());
  v1::BatchLookupRequest batch;
  for (size_t i = 0; i < requests.size(); ++i) {
    cache_keys[i] = CacheKey(requests[i]);
    if (auto cached = cache_.Get(cache_keys[i])) {
      answers[i] = {std::move(*cached), AnswerSource::kCache, {}};
    } else {
      asked.push_back(i);
      *batch.add_requests() = requests[i];
    }
  }
  if (asked.empty()) return answers;

  grpc::ClientContext context;
  SetDeadline(context, deadline);
  v1::BatchLookupResponse reply;
  grpc::Status status = stub_->BatchLookup(&context, batch, &reply);
  if (status.ok() && static_cast<size_t>(reply.responses_size()) != asked.size()) {
    status = grpc::Status(grpc::StatusCode::INTERNAL,
                          "daemon sent " + std::to_string(reply.responses_size()) +
                              " answers for " + std::to_string(asked.size()) + " requests");
  }
  for (size_t j = 0; j < asked.size(); ++j) {
    size_t i = asked[j];
    if (!status.ok()) {
      answers[i] = Fallback(status);
      continue;
    }
    answers[i].response = std::move(*reply.mutable_responses(static_cast<int>(j)));
    Remember(cache_keys[i], answers[i].response);
  }
  return answers;
}

grpc::Status TiletuneClient::SubmitJob(v1::SubmitJobRequest request,
                                       v1::SubmitJobResponse* response) {
  const auto new_context = [this] {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + options_.submit_deadline);
    return context;
  };
  return SubmitJobWithRetries(*stub_, request, new_context, options_.submit_retry, *response);
}

LookupAnswer TiletuneClient::Fallback(const grpc::Status& status) const {
  LookupAnswer answer;
  answer.source = AnswerSource::kFallback;
  answer.status = status;
  answer.response.set_result(v1::LookupResponse::RESULT_MISS);
  auto* fallback = answer.response.mutable_fallback();
  fallback->set_library("vendor");
  bool unreachable = status.error_code() == grpc::StatusCode::UNAVAILABLE ||
                     status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
  fallback->set_reason(
      unreachable ? "tiletuned unavailable at " + address_ + ": " + status.error_message()
                  : "tiletuned at " + address_ + " refused the lookup: " + status.error_message());
  return answer;
}

void TiletuneClient::Remember(const std::string& cache_key, const v1::LookupResponse& response) {
  bool hit = response.result() == v1::LookupResponse::RESULT_HIT;
  cache_.Put(cache_key, response, hit ? options_.hit_ttl : options_.miss_ttl);
}

void TiletuneClient::SetDeadline(grpc::ClientContext& context,
                                 std::optional<std::chrono::milliseconds> deadline) const {
  context.set_deadline(std::chrono::system_clock::now() + deadline.value_or(options_.deadline));
}

}  // namespace tiletune::client
