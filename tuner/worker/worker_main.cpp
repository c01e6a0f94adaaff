// tiletune-worker: the benchmark worker process. Reads framed BenchRequests
// on stdin, answers each with a framed BenchResponse on stdout, logs to
// stderr, and exits at end of input. A kernel that hangs or crashes takes
// only this process down; the tuner kills and restarts it.
#include <sys/resource.h>
#include <unistd.h>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <map>
#include <memory>

#include "runtime/device_executor.h"
#include "tiletune/worker/v1/worker.pb.h"
#include "tuner/worker/bench_runner.h"
#include "tuner/worker/frame_codec.h"

namespace {

using tiletune::worker::v1::BenchRequest;
using tiletune::worker::v1::BenchResponse;

// Kernels may print: frames go to a private copy of stdout and fd 1 becomes
// stderr, so nothing a kernel writes can corrupt the protocol.
int TakeProtocolOutput() {
  const int fd = ::dup(STDOUT_FILENO);
  if (fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return -1;
  return fd;
}

class Worker {
 public:
  BenchResponse Handle(const std::string& payload) {
    BenchResponse response;
    BenchRequest request;
    if (!request.ParseFromString(payload)) {
      response.set_status(BenchResponse::STATUS_RUN_ERROR);
      response.set_error("unreadable BenchRequest");
      return response;
    }
    tiletune::runtime::DeviceExecutor* executor = ExecutorFor(request.backend(), &response);
    if (!executor) return response;
    spdlog::debug("run {} from {}", request.entry(), request.artifact_path());
    return runner_.Run(request, *executor);
  }

 private:
  tiletune::runtime::DeviceExecutor* ExecutorFor(const std::string& backend,
                                                 BenchResponse* response) {
    auto& executor = executors_[backend];
    if (!executor) {
      std::string why;
      executor = tiletune::runtime::OpenDeviceExecutor(backend, &why);
      if (!executor) {
        executors_.erase(backend);
        response->set_status(BenchResponse::STATUS_LOAD_ERROR);
        response->set_error(why);
        return nullptr;
      }
    }
    return executor.get();
  }

  std::map<std::string, std::unique_ptr<tiletune::runtime::DeviceExecutor>> executors_;
  tiletune::tuner::BenchRunner runner_;
};

}  // namespace

int main() {
  spdlog::set_default_logger(spdlog::stderr_logger_st("tiletune-worker"));
  // A crashing kernel is an expected outcome here, not something to dump.
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  const int out = TakeProtocolOutput();
  if (out < 0) {
    spdlog::critical("cannot set up the protocol output: errno {}", errno);
    return 2;
  }

  Worker worker;
  tiletune::tuner::FrameReader reader;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n == 0) return 0;
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::critical("reading requests: errno {}", errno);
      return 2;
    }
    reader.Append(buf, static_cast<size_t>(n));
    try {
      while (const auto payload = reader.Next()) {
        const std::string frame = tiletune::tuner::EncodeFrame(worker.Handle(*payload));
        if (tiletune::tuner::WriteAll(out, frame, [] { return true; }) !=
            tiletune::tuner::WriteOutcome::kDone) {
          return 0;  // the tuner is gone
        }
      }
    } catch (const std::runtime_error& e) {
      spdlog::critical("request stream: {}", e.what());
      return 2;
    }
  }
}
