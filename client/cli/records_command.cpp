#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "client/cli/command_error.h"
#include "client/cli/commands.h"
#include "client/cli/display_format.h"
#include "client/cli/json_output.h"
#include "client/cli/record_format.h"

namespace tiletune::cli {
namespace {

struct RecordsOptions {
  std::string op;
  std::string device_class;
  int limit = 0;
  std::string output = "-";
  std::string file;
  bool replace = false;
  bool dry_run = false;
  bool trust = false;
};

ExitCode List(CliContext& context, const RecordsOptions& options) {
  constexpr int kPageSize = 500;
  v1::ListRecordsRequest request;
  request.set_op(options.op);
  request.set_device_class(options.device_class);
  v1::ListRecordsResponse all;
  do {
    int wanted = options.limit > 0 ? options.limit - all.records_size() : kPageSize;
    request.set_page_size(std::min(wanted, kPageSize));
    v1::ListRecordsResponse page;
    context.Check(context.tuning().ListRecords(context.CallContext().get(), request, &page));
    for (int i = 0; i < page.records_size(); ++i) {
      if (options.limit > 0 && all.records_size() == options.limit) break;
      *all.add_records() = std::move(*page.mutable_records(i));
      // A daemon older than staleness sends none: judged current.
      *all.add_staleness() =
          i < page.staleness_size() ? page.staleness(i) : v1::Staleness::default_instance();
    }
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty() &&
           (options.limit == 0 || all.records_size() < options.limit));
  if (context.json()) {
    PrintJson(all);
  } else {
    PrintRecordsTable(all, std::cout, context.table_width());
    PrintUnservedNotes(all, std::cerr);
  }
  return kOk;
}

// Streams ExportRecords as JSON Lines. A file is written beside its final
// name and renamed at the end, so a failed export leaves no half file.
ExitCode Export(CliContext& context, const RecordsOptions& options) {
  bool to_stdout = options.output == "-";
  std::filesystem::path partial = options.output + ".partial";
  std::ofstream file;
  if (!to_stdout) {
    file.open(partial, std::ios::binary | std::ios::trunc);
    if (!file) {
      throw CommandError(kUsage, "cannot write " + options.output + ": " + std::strerror(errno));
    }
  }
  std::ostream& out = to_stdout ? std::cout : file;
  v1::ExportRecordsRequest request;
  request.set_op(options.op);
  request.set_device_class(options.device_class);
  auto call = context.CallContext();
  auto stream = context.tuning().ExportRecords(call.get(), request);
  v1::ExportLine line;
  int count = 0;
  while (stream->Read(&line)) {
    out << ToJson(line, JsonDefaults::kOmit) << '\n';
    ++count;
  }
  grpc::Status status = stream->Finish();
  out.flush();
  if (!to_stdout) file.close();
  bool written = static_cast<bool>(out);
  if (!to_stdout && (!status.ok() || !written)) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
  }
  context.Check(status);
  if (!written) throw CommandError(kUsage, "cannot write " + options.output);
  if (!to_stdout) {
    std::filesystem::rename(partial, options.output);
    std::cerr << "exported " << Counted(count, "record") << " to " << options.output << '\n';
  }
  return kOk;
}

std::string ReadInput(const std::string& name) {
  std::ostringstream text;
  if (name == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  std::ifstream in(name, std::ios::binary);
  if (!in) throw CommandError(kUsage, "cannot read " + name + ": " + std::strerror(errno));
  text << in.rdbuf();
  return text.str();
}

ExitCode Import(CliContext& context, const RecordsOptions& options) {
  v1::ImportRecordsRequest request;
  request.set_jsonl(ReadInput(options.file));
  request.set_replace(options.replace);
  request.set_dry_run(options.dry_run);
  request.set_trust(options.trust);
  v1::ImportRecordsResponse response;
  context.Check(context.tuning().ImportRecords(context.CallContext().get(), request, &response));
  if (context.json()) {
    PrintJson(response);
  } else {
    for (const auto& reject : response.rejects()) {
      std::cout << options.file << ":" << reject.line() << ": "
                << (reject.field().empty() ? "" : reject.field() + ": ")
                << OneLine(reject.message()) << '\n';
    }
    if (response.rejects().empty()) {
      std::cout << (options.dry_run ? "would import " : "imported ")
                << Counted(response.imported(), "record")
                << (options.trust ? " (trusted: served now)" : "") << '\n';
    }
    for (const auto& v : response.verifications()) {
      if (!v.job_id().empty()) {
        std::cout << fmt::format("class {}: {} unverified until verify job {} re-measures them\n",
                                 v.device_class(), Counted(v.records(), "record"), v.job_id());
      } else {
        std::cout << fmt::format("class {}: {}: {}\n", v.device_class(),
                                 Counted(v.records(), "record"), OneLine(v.reason()));
      }
    }
  }
  if (!response.rejects().empty()) {
    int rejected = response.rejects_size();
    throw CommandError(kImportRejected,
                       fmt::format("{}: {} rejected; {}", options.file, Counted(rejected, "line"),
                                   response.imported() == 0
                                       ? "nothing imported"
                                       : Counted(response.imported(), "record") + " imported"));
  }
  return kOk;
}

}  // namespace

void AddRecordsCommand(CLI::App& app, CommandRun& run) {
  auto options = std::make_shared<RecordsOptions>();
  auto* records = app.add_subcommand("records", "List, export and import tuning records");
  records->require_subcommand(1);

  auto* list = records->add_subcommand("list", "List records (all pages)");
  list->add_option("--op", options->op, "only this op");
  list->add_option("--device-class", options->device_class, "only this device class");
  list->add_option("--limit", options->limit, "at most N records (0: all)")
      ->check(CLI::NonNegativeNumber);
  list->callback([options, &run] { run = [options](CliContext& c) { return List(c, *options); }; });

  auto* exporter = records->add_subcommand("export", "Write records as JSON Lines");
  exporter->add_option("--op", options->op, "only this op");
  exporter->add_option("--device-class", options->device_class, "only this device class");
  exporter->add_option("-o,--output", options->output, "file, or - for stdout")
      ->capture_default_str();
  exporter->callback(
      [options, &run] { run = [options](CliContext& c) { return Export(c, *options); }; });

  auto* importer = records->add_subcommand(
      "import",
      "Load records from a JSON Lines export; any rejected line imports nothing. Each line is "
      "checked against this daemon's kernel registry (template, parameters in its space, "
      "fingerprint of the device class, times agreeing with the speedup, error within tolerance). "
      "Imported records are not served until a verify job re-measures them on this daemon's "
      "device of their class (none here: they stay unverified), unless --trust");
  importer->add_option("FILE", options->file, "export file, or - for stdin")->required();
  importer->add_flag("--replace", options->replace, "replace records that already exist");
  importer->add_flag("--dry-run", options->dry_run, "validate only");
  importer->add_flag("--trust", options->trust,
                     "serve the records at once, as they came, without verifying them here");
  importer->callback(
      [options, &run] { run = [options](CliContext& c) { return Import(c, *options); }; });
}

}  // namespace tiletune::cli
