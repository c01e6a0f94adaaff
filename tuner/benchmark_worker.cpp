#include "tuner/benchmark_worker.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

#include "runtime/subprocess.h"
#include "tuner/worker/frame_codec.h"

namespace tiletune::tuner {
namespace {

using Clock = std::chrono::steady_clock;
using worker::v1::BenchResponse;

// How often a wait looks at the cancel flag.
constexpr auto kCancelPoll = std::chrono::milliseconds(50);

// A write to a worker that just died must fail with EPIPE, not kill us.
void IgnoreSigpipe() {
  static std::once_flag once;
  std::call_once(once, [] { ::signal(SIGPIPE, SIG_IGN); });
}

BenchmarkWorker::Outcome OutcomeOf(BenchResponse::Status status) {
  switch (status) {
    case BenchResponse::STATUS_OK: return BenchmarkWorker::Outcome::kOk;
    case BenchResponse::STATUS_LOAD_ERROR: return BenchmarkWorker::Outcome::kLoadError;
    case BenchResponse::STATUS_WRONG_RESULT: return BenchmarkWorker::Outcome::kWrongResult;
    default: return BenchmarkWorker::Outcome::kRunError;
  }
}

}  // namespace

// One started worker. After a kill or crash it stays as a dead husk, so that
// the next Run knows the new worker it starts is a restart.
class BenchmarkWorker::Process {
 public:
  explicit Process(runtime::ChildProcess child) : child_(std::move(child)) {}

  runtime::ChildProcess& child() { return child_; }
  FrameReader& reader() { return reader_; }
  bool alive() const { return !child_.reaped(); }

  // Ends the process for good; how it ended, for the error message.
  runtime::ExitStatus Kill() {
    child_.KillGroup(SIGKILL);
    return child_.Wait();
  }

 private:
  runtime::ChildProcess child_;
  FrameReader reader_;
};

BenchmarkWorker::BenchmarkWorker(Options options) : options_(std::move(options)) {}

BenchmarkWorker::~BenchmarkWorker() {
  Stop();
}

void BenchmarkWorker::Stop() {
  if (process_ && process_->alive()) {
    // End of input asks the worker to exit; it is killed if it does not.
    process_->child().CloseStdin();
    const auto deadline = Clock::now() + std::chrono::seconds(1);
    while (!process_->child().TryWait() && Clock::now() < deadline) {
      ::usleep(5000);
    }
    process_->Kill();
  }
  process_.reset();
}

BenchmarkWorker::Result BenchmarkWorker::Run(const worker::v1::BenchRequest& request,
                                             std::chrono::milliseconds limit,
                                             const std::atomic<bool>* cancel) {
  IgnoreSigpipe();
  const auto deadline = Clock::now() + limit;
  const auto cancelled = [cancel] { return cancel && cancel->load(); };
  // Ends the worker and answers `outcome`; the next Run starts a new one.
  const auto lose = [this](Outcome outcome, std::string error) {
    process_->Kill();
    return Result{outcome, {}, std::move(error)};
  };
  const auto died = [this] {
    const runtime::ExitStatus status = process_->Kill();
    return Result{Outcome::kCrash,
                  {},
                  status.exited ? "worker exited with code " + std::to_string(status.code)
                                : "worker died: " + runtime::SignalName(status.signal)};
  };

  if (!process_ || !process_->alive()) {
    const bool restart = process_ != nullptr;
    try {
      process_ =
          std::make_unique<Process>(runtime::ChildProcess::Start({.argv = {options_.worker_binary},
                                                                  .env = options_.env,
                                                                  .pipe_stdin = true,
                                                                  .pipe_stdout = true,
                                                                  .priority = options_.priority}));
    } catch (const std::system_error& e) {
      process_.reset();
      return {
          Outcome::kRunError, {}, "cannot start the benchmark worker: " + std::string(e.what())};
    }
    if (restart) ++restarts_;
  }

  switch (WriteAll(process_->child().stdin_fd(), EncodeFrame(request),
                   [&] { return !cancelled() && Clock::now() < deadline; })) {
    case WriteOutcome::kDone: break;
    case WriteOutcome::kBroken: return died();
    case WriteOutcome::kGaveUp:
      return cancelled() ? lose(Outcome::kCancelled, "cancelled")
                         : lose(Outcome::kTimeout, "the worker did not take the request within " +
                                                       std::to_string(limit.count()) + " ms");
  }

  char buf[65536];
  for (;;) {
    if (cancelled()) return lose(Outcome::kCancelled, "cancelled");
    const auto now = Clock::now();
    if (now >= deadline) {
      return lose(Outcome::kTimeout,
                  "no answer within " + std::to_string(limit.count()) + " ms; worker killed");
    }
    const auto wait =
        std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now),
                 std::chrono::milliseconds(kCancelPoll));
    pollfd p{process_->child().stdout_fd(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count()) + 1) <= 0) continue;
    const ssize_t n = ::read(p.fd, buf, sizeof buf);
    if (n == 0) return died();
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return died();
    }
    process_->reader().Append(buf, static_cast<size_t>(n));
    std::optional<std::string> payload;
    try {
      payload = process_->reader().Next();
    } catch (const std::runtime_error& e) {
      return lose(Outcome::kRunError, std::string("worker protocol: ") + e.what());
    }
    if (!payload) continue;
    Result result;
    if (!result.response.ParseFromString(*payload)) {
      return lose(Outcome::kRunError, "worker protocol: unreadable BenchResponse");
    }
    result.outcome = OutcomeOf(result.response.status());
    result.error = result.response.status() == BenchResponse::STATUS_UNSPECIFIED
                       ? "worker answered without a status"
                       : result.response.error();
    return result;
  }
}

const char* OutcomeName(BenchmarkWorker::Outcome outcome) {
  switch (outcome) {
    case BenchmarkWorker::Outcome::kOk: return "ok";
    case BenchmarkWorker::Outcome::kTimeout: return "timeout";
    case BenchmarkWorker::Outcome::kCrash: return "crash";
    case BenchmarkWorker::Outcome::kWrongResult: return "wrong result";
    case BenchmarkWorker::Outcome::kLoadError: return "load error";
    case BenchmarkWorker::Outcome::kRunError: return "run error";
    case BenchmarkWorker::Outcome::kCancelled: return "cancelled";
  }
  return "unknown";
}

}  // namespace tiletune::tuner
