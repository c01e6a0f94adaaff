#include <iostream>
#include <memory>
#include <optional>

#include "client/cli/commands.h"
#include "client/cli/job_watch.h"
#include "client/cli/json_output.h"
#include "client/enum_names.h"
#include "client/input_error.h"
#include "client/job_spec_file.h"
#include "client/tiletune_client.h"

namespace tiletune::cli {
namespace {

struct SubmitOptions {
  std::string file;
  bool watch = false;
  std::optional<int32_t> priority;
  std::string strategy;
  std::string request_id;
};

ExitCode Submit(CliContext& context, const SubmitOptions& options) {
  v1::SubmitJobRequest request;
  *request.mutable_spec() = client::ReadJobSpecFile(options.file);
  if (options.priority) request.mutable_spec()->set_priority(*options.priority);
  if (!options.strategy.empty()) {
    const auto strategy = client::ParseShortEnumName(client::kStrategyNaming, options.strategy);
    if (!strategy) {
      throw client::InputError("--strategy: unknown strategy '" + options.strategy + "' (known: " +
                               client::ShortEnumNameList(client::kStrategyNaming) + ")");
    }
    request.mutable_spec()->set_strategy(static_cast<v1::Strategy>(*strategy));
  }
  request.set_request_id(options.request_id);
  // A call that timed out or found the daemon unreachable is sent again
  // with the same request id: the daemon makes the job at most once. Quietly:
  // a command that fails says so in one line, at the end.
  v1::SubmitJobResponse response;
  context.Check(client::SubmitJobWithRetries(
      context.tuning(), request, [&] { return context.CallContext(); }, {}, response));
  if (response.already_existed()) {
    std::cerr << "tiletune: request id " << request.request_id() << " already made job "
              << response.job_id() << "; nothing new was queued\n";
  }
  // With --json --watch the events alone are the output: the first one holds
  // the job.
  if (!context.json()) {
    std::cout << response.job_id() << '\n' << std::flush;
  } else if (!options.watch) {
    PrintJson(response.job());
  }
  return options.watch ? WatchJob(context, response.job_id()) : kOk;
}

}  // namespace

void AddSubmitCommand(CLI::App& app, CommandRun& run) {
  auto options = std::make_shared<SubmitOptions>();
  auto* command = app.add_subcommand(
      "submit", "Queue a tuning job from a YAML or JSON job spec file; prints the job id");
  command->add_option("FILE", options->file, "job spec file (YAML or JSON)")->required();
  command->add_flag("--watch", options->watch,
                    "follow the job until it ends, then print winners (--json: JSON Lines, one "
                    "event a line; Ctrl-C detaches, the job keeps running)");
  command->add_option("--priority", options->priority, "override the spec's priority");
  command->add_option("--strategy", options->strategy,
                      "override the spec's search strategy (exhaustive, random, annealing)");
  command->add_option("--request-id", options->request_id,
                      "idempotency key: submitting again with the same one answers the job it "
                      "made (default: a new random one, kept across this command's retries)");
  command->callback(
      [options, &run] { run = [options](CliContext& c) { return Submit(c, *options); }; });
}

}  // namespace tiletune::cli
