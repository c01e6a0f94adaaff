#include "client/cli/job_watch.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <iostream>

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
      // \r and "erase to end of line" redraw the bar in place.
      std::cerr << '\r' << TruncateToWidth(ProgressLine(job, event.item_index()), Width())
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
  static size_t Width() {
    winsize size{};
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 1) return size.ws_col - 1;
    return 79;
  }

  bool json_;
  bool terminal_;
  bool drawn_ = false;
};

}  // namespace

ExitCode WatchJob(CliContext& context, const std::string& job_id) {
  v1::WatchJobRequest request;
  request.set_job_id(job_id);
  ProgressDisplay display(context.json());
  v1::JobEvent event;
  v1::Job job;
  grpc::Status status;
  // The watch sets no deadline, so DEADLINE_EXCEEDED is the daemon's
  // max_stream_seconds ending it: watch on while the job is unfinished. Each
  // watch starts with a snapshot, so no progress is lost in between.
  do {
    grpc::ClientContext call;
    auto stream = context.tuning().WatchJob(&call, request);
    while (stream->Read(&event)) {
      if (event.has_job()) job = event.job();
      display.Show(event, job);
    }
    status = stream->Finish();
  } while (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && !IsFinished(job.state()) &&
           job.state() != v1::JOB_STATE_UNSPECIFIED);
  display.End();
  context.Check(status);
  if (!IsFinished(job.state())) {
    throw CommandError(kServerError, "the watch of job " + job_id + " ended while the job was " +
                                         JobStateName(job.state()));
  }
  if (!context.json()) PrintJobItems(job, std::cout);
  if (job.state() != v1::JOB_SUCCEEDED) {
    throw CommandError(kJobUnsuccessful, "job " + job_id + " " + JobStateName(job.state()) +
                                             (job.error().empty() ? "" : ": " + job.error()));
  }
  return kOk;
}

}  // namespace tiletune::cli
