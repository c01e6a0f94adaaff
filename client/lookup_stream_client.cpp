#include "client/lookup_stream_client.h"

#include <condition_variable>
#include <optional>

namespace tiletune::client {

// How a stream ended, told by OnDone; shared, since the stream is gone then.
struct StreamEnd {
  std::mutex mu;
  std::condition_variable told;
  std::optional<grpc::Status> status;
};

// The streams of one client not ended yet: its channel must outlive them.
struct LookupStreamClient::LiveStreams {
  std::mutex mu;
  std::condition_variable ended;
  int count = 0;
};

// The open call. A hold keeps gRPC from ending it (OnDone) while the client
// may still touch it; Release lets go of the hold, and OnDone deletes it
// once its last operation is done.
class LookupStreamClient::Stream final
    : public grpc::ClientBidiReactor<v1::LookupRequest, v1::LookupStreamResponse> {
 public:
  Stream(v1::TuningService::Stub& stub, std::shared_ptr<LiveStreams> live)
      : end_(std::make_shared<StreamEnd>()), live_(std::move(live)) {
    {
      std::lock_guard lock(live_->mu);
      ++live_->count;
    }
    stub.async()->LookupStream(&context_, this);
    AddHold();
    StartCall();
  }

  // Sends `request` and waits for its answer until `until`; false when none
  // came: the stream failed, or the time passed.
  bool Ask(const v1::LookupRequest& request, std::chrono::steady_clock::time_point until,
           v1::LookupStreamResponse& answer) {
    {
      std::lock_guard lock(mu_);
      request_ = request;
      written_ = read_ = false;
    }
    // Outside the lock: a reaction may run before these return.
    StartWrite(&request_);
    StartRead(&answer_);
    std::unique_lock lock(mu_);
    if (!answered_.wait_until(lock, until, [this] { return failed_ || (written_ && read_); }) ||
        failed_) {
      return false;
    }
    answer = std::move(answer_);
    return true;
  }

  // The client is done with it: ends it (cancelled, or `gently` with the
  // end of its requests) and lets gRPC finish and delete it. Returns where
  // its end will be told.
  std::shared_ptr<StreamEnd> Release(bool gently) {
    auto end = end_;
    if (gently) {
      StartWritesDone();
    } else {
      context_.TryCancel();
    }
    RemoveHold();
    return end;
  }

  void OnWriteDone(bool ok) override { Mark(ok, written_); }
  void OnReadDone(bool ok) override { Mark(ok, read_); }
  void OnDone(const grpc::Status& status) override {
    {
      std::lock_guard lock(end_->mu);
      end_->status = status;
      end_->told.notify_all();
    }
    const std::shared_ptr<LiveStreams> live = live_;
    delete this;
    std::lock_guard lock(live->mu);
    --live->count;
    live->ended.notify_all();
  }

 private:
  void Mark(bool ok, bool& flag) {
    std::lock_guard lock(mu_);
    flag = true;
    failed_ = failed_ || !ok;
    answered_.notify_one();
  }

  const std::shared_ptr<StreamEnd> end_;
  const std::shared_ptr<LiveStreams> live_;
  grpc::ClientContext context_;
  std::mutex mu_;
  std::condition_variable answered_;
  v1::LookupRequest request_;
  v1::LookupStreamResponse answer_;
  bool written_ = false;
  bool read_ = false;
  bool failed_ = false;
};

LookupStreamClient::LookupStreamClient(std::shared_ptr<grpc::Channel> channel,
                                       std::chrono::milliseconds deadline)
    : stub_(v1::TuningService::NewStub(std::move(channel))),
      deadline_(deadline),
      live_(std::make_shared<LiveStreams>()) {}

LookupStreamClient::~LookupStreamClient() {
  {
    std::lock_guard lock(mu_);
    if (stream_) stream_->Release(/*gently=*/true);
  }
  // gRPC needs the channel until each call has ended; one the daemon does
  // not end (hung) is left to the process's end after a while.
  std::unique_lock lock(live_->mu);
  live_->ended.wait_for(lock, deadline_ + std::chrono::seconds(5),
                        [this] { return live_->count == 0; });
}

grpc::Status LookupStreamClient::GiveUp(std::chrono::steady_clock::time_point until) {
  auto end = stream_->Release(/*gently=*/false);
  stream_ = nullptr;
  // A stream the daemon ended (a refused credential, max_stream_seconds)
  // has its status already; a cancelled one ends at once.
  std::unique_lock lock(end->mu);
  end->told.wait_until(lock, until, [&] { return end->status.has_value(); });
  if (!end->status) {
    return {grpc::StatusCode::DEADLINE_EXCEEDED, "no answer on the lookup stream in time"};
  }
  if (end->status->ok() || end->status->error_code() == grpc::StatusCode::CANCELLED) {
    return {grpc::StatusCode::UNAVAILABLE, "the lookup stream ended"};
  }
  return *end->status;
}

grpc::Status LookupStreamClient::Lookup(const v1::LookupRequest& request,
                                        v1::LookupResponse& response,
                                        std::optional<std::chrono::milliseconds> deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline.value_or(deadline_);
  std::lock_guard lock(mu_);
  if (!stream_) stream_ = new Stream(*stub_, live_);
  v1::LookupStreamResponse answer;
  if (!stream_->Ask(request, until, answer)) return GiveUp(until);
  if (answer.code() != grpc::StatusCode::OK) {
    return {static_cast<grpc::StatusCode>(answer.code()), answer.message()};
  }
  response = std::move(*answer.mutable_response());
  return grpc::Status::OK;
}

}  // namespace tiletune::client
