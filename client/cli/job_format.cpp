#include "client/cli/job_format.h"

#include <algorithm>

#include <fmt/format.h>

#include "client/cli/display_format.h"
#include "client/cli/text_table.h"
#include "client/enum_names.h"
#include "client/key_text.h"

namespace tiletune::cli {
namespace {

using client::ShortEnumName;

// A variant is done once it was timed or failed (compile errors included).
int VariantsDone(const v1::JobItemProgress& item) {
  return item.benchmarked() + item.failed();
}

std::string Variants(const v1::JobItemProgress& item) {
  return fmt::format("{}/{}", VariantsDone(item), item.variants_planned());
}

std::string WinnerName(v1::Winner winner) {
  return winner == v1::WINNER_UNSPECIFIED ? "-" : ShortEnumName(client::kWinnerNaming, winner);
}

std::string Prefix(const v1::JobEvent& event) {
  return fmt::format("job {} item {}", event.job_id(), event.item_index());
}

std::string WithMessage(std::string line, const std::string& message) {
  return message.empty() ? line : line + ": " + message;
}

const v1::JobItemProgress* FindItem(const v1::Job& job, int index) {
  for (const auto& item : job.items()) {
    if (item.index() == index) return &item;
  }
  return nullptr;
}

// Whether the event is about one item (item_index means something).
bool IsItemEvent(v1::JobEvent::Kind kind) {
  return kind != v1::JobEvent::KIND_SNAPSHOT && kind != v1::JobEvent::KIND_JOB_FINISHED &&
         kind != v1::JobEvent::KIND_UNSPECIFIED;
}

// The job's variants done and planned, over every item.
struct JobProgress {
  int done = 0;
  int planned = 0;
  // An unfinished item's plan is unknown when no device of its queue was
  // known where the job was made (none there, none the fleet announced).
  bool unknown = false;
};

JobProgress ProgressOf(const v1::Job& job) {
  JobProgress progress;
  for (const auto& item : job.items()) {
    progress.done += VariantsDone(item);
    progress.planned += item.variants_planned();
    progress.unknown =
        progress.unknown || (item.variants_planned() == 0 && !IsFinished(item.state()));
  }
  return progress;
}

// "12/40 variants", "12/40+ variants" while a plan is unknown.
std::string JobVariants(const v1::Job& job) {
  const JobProgress progress = ProgressOf(job);
  return fmt::format("{}/{}{} variants", progress.done, progress.planned,
                     progress.unknown ? "+" : "");
}

int ItemsFinished(const v1::Job& job) {
  int finished = 0;
  for (const auto& item : job.items()) finished += IsFinished(item.state()) ? 1 : 0;
  return finished;
}

}  // namespace

std::string JobStateName(v1::JobState state) {
  return ShortEnumName(client::kJobStateNaming, state);
}

bool IsFinished(v1::JobState state) {
  return state == v1::JOB_SUCCEEDED || state == v1::JOB_FAILED || state == v1::JOB_CANCELLED;
}

void PrintJobsTable(const google::protobuf::RepeatedPtrField<v1::Job>& jobs, std::ostream& out,
                    std::optional<size_t> max_width) {
  TextTable table({"ID", "STATE", "NAME", "ITEMS", "DEVICE", "SUBMITTED BY", "CREATED"});
  table.CutToFit("NAME", 16);
  table.CutToFit("SUBMITTED BY", 12);
  table.CutToFit("DEVICE", 12);
  table.DropToFit("SUBMITTED BY");
  table.CutToFit("NAME", 8);
  for (const auto& job : jobs) {
    table.AddRow({job.id(), JobStateName(job.state()), OrDash(job.spec().name()),
                  fmt::format("{}/{}", ItemsFinished(job), job.items_size()), OrDash(job.device()),
                  OrDash(job.submitted_by()), FormatTimestamp(job.created_at())});
  }
  table.Print(out, max_width);
}

void PrintJob(const v1::Job& job, std::ostream& out, std::optional<size_t> max_width) {
  const auto& spec = job.spec();
  TextTable fields({"id", job.id()});
  fields.AddRow({"name", OrDash(spec.name())});
  fields.AddRow({"state", JobStateName(job.state())});
  fields.AddRow({"device", OrDash(job.device())});
  fields.AddRow({"submitted by", OrDash(job.submitted_by())});
  fields.AddRow({"strategy", ShortEnumName(client::kStrategyNaming, spec.strategy())});
  fields.AddRow({"priority", std::to_string(spec.priority())});
  fields.AddRow({"budget", fmt::format("{} variants, {} s (0: the daemon's default)",
                                       spec.budget().max_variants(), spec.budget().max_seconds())});
  fields.AddRow({"created", FormatTimestamp(job.created_at())});
  fields.AddRow({"started", FormatTimestamp(job.started_at())});
  fields.AddRow({"finished", FormatTimestamp(job.finished_at())});
  if (!job.error().empty()) fields.AddRow({"error", job.error()});
  fields.AddRow({"progress", JobVariants(job)});
  fields.Print(out);
  out << '\n';
  PrintJobItems(job, out, max_width);
}

void PrintJobItems(const v1::Job& job, std::ostream& out, std::optional<size_t> max_width) {
  TextTable table({"ITEM", "KEY", "STATE", "VARIANTS", "PARAMS", "TUNED µs", "BASELINE µs",
                   "SPEEDUP", "WINNER"});
  // The winner's params are the longest and least needed at a glance.
  table.CutToFit("PARAMS", 12);
  table.DropToFit("BASELINE µs");
  table.CutToFit("KEY", 24);
  table.DropToFit("VARIANTS");
  table.CutToFit("PARAMS", 6);
  for (const auto& item : job.items()) {
    table.AddRow({std::to_string(item.index()), client::KeyText(item.key()),
                  JobStateName(item.state()), Variants(item), FormatParams(item.best_params()),
                  FormatMicros(item.best_us()), FormatMicros(item.baseline_us()),
                  FormatSpeedup(item.best_us(), item.baseline_us()), WinnerName(item.winner())});
  }
  table.Print(out, max_width);
  for (const auto& item : job.items()) {
    if (!item.error().empty()) out << "item " << item.index() << ": " << item.error() << '\n';
  }
}

std::string ProgressLine(const v1::Job& job, const v1::JobEvent& event) {
  constexpr int kBarWidth = 20;
  const JobProgress progress = ProgressOf(job);
  const int filled = progress.planned > 0
                         ? kBarWidth * std::min(progress.done, progress.planned) / progress.planned
                         : 0;
  std::string line =
      fmt::format("job {} {} [{}{}] {}, {}/{} items done", job.id(), JobStateName(job.state()),
                  std::string(filled, '#'), std::string(kBarWidth - filled, '.'), JobVariants(job),
                  ItemsFinished(job), job.items_size());
  const auto* item = IsItemEvent(event.kind()) ? FindItem(job, event.item_index()) : nullptr;
  if (item != nullptr) {
    line += fmt::format(
        " | item {} {}: {} {}", item->index(), JobStateName(item->state()), Variants(*item),
        item->best_us() > 0 ? "best " + FormatMicros(item->best_us()) + " µs" : "no result yet");
  }
  return line;
}

std::string EventLine(const v1::JobEvent& event, const v1::Job& job) {
  const v1::JobItemProgress* item = FindItem(job, event.item_index());
  std::string progress = item != nullptr ? " (" + Variants(*item) + ")" : "";
  std::string params = FormatParams(event.params());
  switch (event.kind()) {
    case v1::JobEvent::KIND_SNAPSHOT:
      return fmt::format("job {} {}: {} items, {}", event.job_id(), JobStateName(job.state()),
                         job.items_size(), JobVariants(job));
    case v1::JobEvent::KIND_ITEM_STARTED:
      return fmt::format("{}: started{}", Prefix(event), progress);
    case v1::JobEvent::KIND_VARIANT_COMPILED:
      return fmt::format("{}: compiled {}", Prefix(event),
                         event.params().empty() ? "a variant" : params);
    case v1::JobEvent::KIND_VARIANT_BENCHMARKED:
      return fmt::format("{}: {} {} µs{}", Prefix(event), params, FormatMicros(event.time_us()),
                         progress);
    case v1::JobEvent::KIND_VARIANT_FAILED:
      return WithMessage(
          fmt::format("{}: {} {}{}", Prefix(event), params,
                      ShortEnumName(client::kTrialStatusNaming, event.status()), progress),
          event.message());
    case v1::JobEvent::KIND_BEST_SO_FAR:
      return fmt::format("{}: best so far {} {} µs", Prefix(event), params,
                         FormatMicros(event.time_us()));
    case v1::JobEvent::KIND_ITEM_FINISHED:
      if (item == nullptr) return WithMessage(Prefix(event) + " finished", event.message());
      return WithMessage(
          fmt::format("{} {}: winner {}, {} µs vs baseline {} µs ({})", Prefix(event),
                      JobStateName(item->state()), WinnerName(item->winner()),
                      FormatMicros(item->best_us()), FormatMicros(item->baseline_us()),
                      FormatSpeedup(item->best_us(), item->baseline_us())),
          item->error());
    case v1::JobEvent::KIND_JOB_FINISHED:
      return WithMessage(
          fmt::format("job {} {}: {}", event.job_id(), JobStateName(job.state()), JobVariants(job)),
          job.error());
    default:
      return WithMessage(
          fmt::format("job {}: event {}", event.job_id(), static_cast<int>(event.kind())),
          event.message());
  }
}

}  // namespace tiletune::cli
