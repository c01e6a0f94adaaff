#include "client/cli/job_watch.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "client/cli/command_error.h"
#include "client/cli/job_format.h"
#include "client/cli/json_output.h"
#include "client/cli/text_table.h"

namespace tiletune::cli {
namespace {

// Shows each event the way the output can take it.
class ProgressDisplay {
 public:
  explicit ProgressDisplay(bool json) : json_(json), terminal_(isatty(STDERR_FILENO) == 1) {}

  void Show(const v1::JobEvent& event, const v1::Job& job) {
    if (json_) {
      PrintJson(event);
    } else if (terminal_) {
      // \r and "erase to end of line" redraw the bar in place; one column
      // is left free so that the terminal does not wrap.
      const size_t width = OutputColumns(STDERR_FILENO).value_or(80);
      std::cerr << '\r' << TruncateToWidth(ProgressLine(job, event), width > 1 ? width - 1 : width)
                << "\033[K" << std::flush;
      drawn_ = true;
    } else {
      std::cerr << EventLine(event, job) << '\n' << std::flush;
    }
  }

  // Ends the bar's line so later output starts on its own.
  void End() {
    if (drawn_) std::cerr << '\n' << std::flush;
    drawn_ = false;
  }

 private:
  bool json_;
  bool terminal_;
  bool drawn_ = false;
};

// The write end of the self-pipe that the SIGINT handler wakes the
// detaching thread through (write(2) is safe in a handler, gRPC calls are
// not).
int interrupt_pipe_write = -1;

void OnInterrupt(int) {
  const int saved = errno;
  const char byte = 'i';
  [[maybe_unused]] auto written = write(interrupt_pipe_write, &byte, 1);
  errno = saved;
}

// While it lives, the first SIGINT cancels the watch call in flight (and
// any later one) instead of killing the process; SA_RESETHAND gives a
// second SIGINT its default action.
class DetachOnInterrupt {
 public:
  DetachOnInterrupt() {
    if (pipe2(pipe_, O_CLOEXEC) != 0) {
      throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
    }
    interrupt_pipe_write = pipe_[1];
    struct sigaction action {};
    action.sa_handler = OnInterrupt;
    action.sa_flags = SA_RESETHAND | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_);
    waiter_ = std::thread([this] { Wait(); });
  }

  ~DetachOnInterrupt() {
    sigaction(SIGINT, &previous_, nullptr);
    const char quit = 'q';
    [[maybe_unused]] auto written = write(pipe_[1], &quit, 1);
    waiter_.join();
    interrupt_pipe_write = -1;
    close(pipe_[0]);
    close(pipe_[1]);
  }

  DetachOnInterrupt(const DetachOnInterrupt&) = delete;
  DetachOnInterrupt& operator=(const DetachOnInterrupt&) = delete;

  // The call a SIGINT cancels from now on; null between calls.
  void Watch(grpc::ClientContext* call) {
    std::lock_guard lock(mu_);
    call_ = call;
    if (call_ != nullptr && interrupted_) call_->TryCancel();
  }

  bool interrupted() const {
    std::lock_guard lock(mu_);
    return interrupted_;
  }

 private:
  void Wait() {
    for (;;) {
      char byte = 0;
      const ssize_t got = read(pipe_[0], &byte, 1);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0 || byte == 'q') return;
      std::lock_guard lock(mu_);
      interrupted_ = true;
      if (call_ != nullptr) call_->TryCancel();
    }
  }

  int pipe_[2] = {-1, -1};
  struct sigaction previous_ {};
  mutable std::mutex mu_;
  grpc::ClientContext* call_ = nullptr;
  bool interrupted_ = false;
  std::thread waiter_;
};

}  // namespace

ExitCode WatchJob(CliContext& context, const std::string& job_id) {
  v1::WatchJobRequest request;
  request.set_job_id(job_id);
  ProgressDisplay display(context.json());
  DetachOnInterrupt detach;
  v1::JobEvent event;
  v1::Job job;
  grpc::Status status;
  // The watch sets no deadline, so DEADLINE_EXCEEDED is the daemon's
  // max_stream_seconds ending it: watch on while the job is unfinished. Each
  // watch starts with a snapshot, so no progress is lost in between.
  do {
    grpc::ClientContext call;
    detach.Watch(&call);
    auto stream = context.tuning().WatchJob(&call, request);
    while (stream->Read(&event)) {
      if (event.has_job()) job = event.job();
      display.Show(event, job);
    }
    status = stream->Finish();
    detach.Watch(nullptr);
  } while (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && !IsFinished(job.state()) &&
           job.state() != v1::JOB_STATE_UNSPECIFIED && !detach.interrupted());
  display.End();
  if (detach.interrupted() && !IsFinished(job.state())) {
    throw CommandError(kDetached, "detached: job " + job_id +
                                      " keeps running; watch it again with `tiletune jobs watch " +
                                      job_id + "`");
  }
  // A Ctrl-C right after the job's end may cancel the stream's last reply.
  if (!detach.interrupted()) context.Check(status);
  if (!IsFinished(job.state())) {
    throw CommandError(kServerError, "the watch of job " + job_id + " ended while the job was " +
                                         JobStateName(job.state()));
  }
  if (!context.json()) PrintJobItems(job, std::cout, context.table_width());
  if (job.state() != v1::JOB_SUCCEEDED) {
    throw CommandError(kJobUnsuccessful, "job " + job_id + " " + JobStateName(job.state()) +
                                             (job.error().empty() ? "" : ": " + job.error()));
  }
  return kOk;
}

}  // namespace tiletune::cli
