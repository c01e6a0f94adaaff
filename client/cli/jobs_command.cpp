#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "client/cli/commands.h"
#include "client/cli/job_format.h"
#include "client/cli/job_watch.h"
#include "client/cli/json_output.h"
#include "client/enum_names.h"

namespace tiletune::cli {
namespace {

struct JobsOptions {
  std::vector<std::string> states;
  std::string job_id;
};

ExitCode List(CliContext& context, const JobsOptions& options) {
  v1::ListJobsRequest request;
  for (const auto& name : options.states) {
    // CLI11 has checked the names against the same list.
    request.add_states(
        static_cast<v1::JobState>(*client::ParseShortEnumName(client::kJobStateNaming, name)));
  }
  v1::ListJobsResponse all;
  do {
    v1::ListJobsResponse page;
    context.Check(context.tuning().ListJobs(context.CallContext().get(), request, &page));
    for (auto& job : *page.mutable_jobs()) *all.add_jobs() = std::move(job);
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  if (context.json()) {
    PrintJson(all);
  } else {
    PrintJobsTable(all.jobs(), std::cout, context.table_width());
  }
  return kOk;
}

ExitCode Show(CliContext& context, const JobsOptions& options) {
  v1::GetJobRequest request;
  request.set_job_id(options.job_id);
  v1::Job job;
  context.Check(context.tuning().GetJob(context.CallContext().get(), request, &job));
  if (context.json()) {
    PrintJson(job);
  } else {
    PrintJob(job, std::cout, context.table_width());
  }
  return kOk;
}

ExitCode Cancel(CliContext& context, const JobsOptions& options) {
  v1::CancelJobRequest request;
  request.set_job_id(options.job_id);
  v1::Job job;
  context.Check(context.tuning().CancelJob(context.CallContext().get(), request, &job));
  if (context.json()) {
    PrintJson(job);
  } else {
    std::cout << "job " << job.id() << " " << JobStateName(job.state()) << '\n';
  }
  return kOk;
}

}  // namespace

void AddJobsCommand(CLI::App& app, CommandRun& run) {
  auto options = std::make_shared<JobsOptions>();
  auto* jobs = app.add_subcommand("jobs", "List, show, watch and cancel tuning jobs");
  jobs->require_subcommand(1);

  auto* list = jobs->add_subcommand("list", "List jobs (all pages)");
  list->add_option("--state", options->states, "only jobs in this state (repeatable)")
      ->check(CLI::IsMember(client::ShortEnumNames(client::kJobStateNaming)));
  list->callback([options, &run] { run = [options](CliContext& c) { return List(c, *options); }; });

  auto* show = jobs->add_subcommand("show", "Show a job and its items");
  show->add_option("ID", options->job_id, "job id")->required();
  show->callback([options, &run] { run = [options](CliContext& c) { return Show(c, *options); }; });

  auto* watch = jobs->add_subcommand(
      "watch",
      "Follow a job until it ends, then print winners (--json: JSON Lines, one event a line; "
      "Ctrl-C detaches, the job keeps running)");
  watch->add_option("ID", options->job_id, "job id")->required();
  watch->callback(
      [options, &run] { run = [options](CliContext& c) { return WatchJob(c, options->job_id); }; });

  auto* cancel = jobs->add_subcommand("cancel", "Cancel a queued or running job");
  cancel->add_option("ID", options->job_id, "job id")->required();
  cancel->callback(
      [options, &run] { run = [options](CliContext& c) { return Cancel(c, *options); }; });
}

}  // namespace tiletune::cli
