#pragma once

#include <string>

#include "client/cli/cli_context.h"
#include "client/cli/exit_codes.h"

namespace tiletune::cli {

// Streams WatchJob until the job ends; no deadline, since a job may run for
// hours. Progress goes to stderr (a redrawn bar on a terminal, one line per
// event otherwise); with --json each event is one JSON line on stdout (JSON
// Lines). At the end the items table goes to stdout. Returns kOk, or throws
// CommandError(kJobUnsuccessful) when the job ended FAILED or CANCELLED.
// Ctrl-C (SIGINT) detaches: CommandError(kDetached) saying that the job
// keeps running and how to watch it again; a second Ctrl-C kills at once.
ExitCode WatchJob(CliContext& context, const std::string& job_id);

}  // namespace tiletune::cli
