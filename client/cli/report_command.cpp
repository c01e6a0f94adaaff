// `tiletune report JOB --html FILE`: the web view's job page as one
// self-contained file (web/standalone_job_page.h), from the same calls the
// page makes to a daemon: GetJob, then ListTrials for each item.
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include <google/protobuf/util/time_util.h>

#include "client/cli/command_error.h"
#include "client/cli/commands.h"
#include "client/cli/json_output.h"
#include "web/standalone_job_page.h"

namespace tiletune::cli {
namespace {

struct ReportOptions {
  std::string job_id;
  std::string html_file;
};

// Every page of one item's trials; the record comes with the first.
v1::ListTrialsResponse ItemTrials(CliContext& context, const std::string& job_id, int item) {
  v1::ListTrialsRequest request;
  request.set_job_id(job_id);
  request.set_item_index(item);
  v1::ListTrialsResponse all;
  do {
    v1::ListTrialsResponse page;
    context.Check(context.tuning().ListTrials(context.CallContext().get(), request, &page));
    if (page.has_record()) *all.mutable_record() = std::move(*page.mutable_record());
    for (auto& t : *page.mutable_trials()) *all.add_trials() = std::move(t);
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  return all;
}

ExitCode Report(CliContext& context, const ReportOptions& options) {
  v1::GetJobRequest request;
  request.set_job_id(options.job_id);
  v1::Job job;
  context.Check(context.tuning().GetJob(context.CallContext().get(), request, &job));
  std::string data = "{\"job\":" + ToJson(job) + ",\"items\":[";
  for (int i = 0; i < job.items_size(); ++i) {
    if (i > 0) data += ',';
    data += ToJson(ItemTrials(context, job.id(), i));
  }
  const auto now = google::protobuf::util::TimeUtil::GetCurrentTime();
  data += "],\"written_at\":\"" + google::protobuf::util::TimeUtil::ToString(now) + "\"}";
  const std::string title =
      "tiletune job " + job.id() + (job.spec().name().empty() ? "" : ": " + job.spec().name());
  std::ofstream out(options.html_file, std::ios::binary | std::ios::trunc);
  out << web::StandaloneJobPage(title, data);
  out.close();
  if (!out) throw CommandError(kUsage, "--html: cannot write " + options.html_file);
  if (!context.json()) std::cout << "wrote " << options.html_file << '\n';
  return kOk;
}

}  // namespace

void AddReportCommand(CLI::App& app, CommandRun& run) {
  auto options = std::make_shared<ReportOptions>();
  auto* report = app.add_subcommand(
      "report", "Write a job's page (trials, convergence, decision) as one self-contained file");
  report->add_option("JOB", options->job_id, "job id")->required();
  report->add_option("--html", options->html_file, "the HTML file to write")->required();
  report->callback(
      [options, &run] { run = [options](CliContext& c) { return Report(c, *options); }; });
}

}  // namespace tiletune::cli
