#include "client/cli/record_format.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "client/cli/display_format.h"
#include "client/cli/text_table.h"
#include "client/enum_names.h"
#include "client/key_text.h"

namespace tiletune::cli {
namespace {

std::string Dims(const google::protobuf::RepeatedField<int64_t>& values) {
  std::string text;
  for (int64_t v : values) text += (text.empty() ? "" : "x") + std::to_string(v);
  return text;
}

// Only what the backend set: the host backend has threads, no grid.
std::string LaunchText(const v1::LaunchGeometry& launch) {
  std::vector<std::string> parts;
  if (launch.grid_size() > 0) parts.push_back("grid " + Dims(launch.grid()));
  if (launch.blocks_per_compute_unit() > 0) {
    parts.push_back("persistent: at most " + std::to_string(launch.blocks_per_compute_unit()) +
                    " blocks per SM/CU");
  }
  if (launch.block_size() > 0) parts.push_back("block " + Dims(launch.block()));
  if (launch.shared_memory_bytes() > 0) {
    parts.push_back(FormatBytes(launch.shared_memory_bytes()) + " shared");
  }
  if (launch.threads() > 0) parts.push_back(Counted(launch.threads(), "thread"));
  // A TMA kernel's: its argument's size and each map's tensor, offset, box
  // (inner x rows) and swizzle, the box as launchers encode it.
  if (launch.argument_bytes() > 0) {
    parts.push_back(FormatBytes(launch.argument_bytes()) + " argument");
  }
  for (const v1::TensorMapArgument& map : launch.tensor_maps()) {
    std::string view;
    for (const int64_t size : map.view())
      view += (view.empty() ? ", viewed as " : "x") + std::to_string(size);
    parts.push_back(fmt::format("tensor map of {} at byte {}: box {}x{}, {}{}", map.tensor(),
                                map.offset(), map.box_inner(), map.box_rows(),
                                map.swizzle_bytes() > 0
                                    ? std::to_string(map.swizzle_bytes()) + " B swizzle"
                                    : std::string("no swizzle"),
                                view));
  }
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
}

std::string TimingText(const v1::Timing& timing) {
  if (timing.median_us() <= 0) return "-";
  std::string text = FormatMicros(timing.median_us()) + " µs median";
  if (timing.repetitions() > 0) {
    text += fmt::format(" (min {}, max {}, {} reps, spread {:.1f}%)", FormatMicros(timing.min_us()),
                        FormatMicros(timing.max_us()), timing.repetitions(), timing.spread() * 100);
  }
  return text;
}

// Whether the winner's output was compared whole with the float64
// reference or, for a large problem, on sampled rows only.
std::string ValidationText(const v1::ValidationCoverage& coverage) {
  if (coverage.checked_elements() == coverage.output_elements()) {
    return fmt::format("whole output ({} elements) vs float64 reference",
                       coverage.output_elements());
  }
  return fmt::format(
      "sampled rows: {} of {} elements vs float64 reference (every element checked written and "
      "finite)",
      coverage.checked_elements(), coverage.output_elements());
}

// The table's short form: "all", a share of sampled elements, or "-" for
// records measured before coverage was kept.
std::string ValidationShare(const v1::ValidationCoverage& coverage) {
  if (coverage.output_elements() == 0) return "-";
  if (coverage.checked_elements() == coverage.output_elements()) return "all";
  return fmt::format("{:.2g}% rows", 100.0 * static_cast<double>(coverage.checked_elements()) /
                                         static_cast<double>(coverage.output_elements()));
}

// The table's short forms: "-" for a record stored before rooflines were
// kept (or with no timed variant), "unknown" when the device's ceilings are.
std::string TflopsShort(const v1::Record& record) {
  return record.has_roofline() ? fmt::format("{:.3g}", record.roofline().achieved_tflops()) : "-";
}

std::string RooflineShort(const v1::Record& record) {
  if (!record.has_roofline()) return "-";
  if (!record.roofline().has_ceilings()) return "unknown";
  return fmt::format("{:.1f}%", 100 * record.roofline().fraction_of_floor());
}

// The tuned time against the device's roofline, and which ceilings say so.
std::string RooflineText(const v1::Roofline& roofline) {
  const std::string achieved = fmt::format("{:.3g} TFLOP/s, {:.3g} TB/s achieved",
                                           roofline.achieved_tflops(), roofline.achieved_tbps());
  if (!roofline.has_ceilings()) return "unknown: no ceilings for this device (" + achieved + ")";
  const auto& ceilings = roofline.ceilings();
  return fmt::format("{:.1f}% of the roofline floor ({}; ceilings {:.4g} TFLOP/s, {:.3g} TB/s: {})",
                     100 * roofline.fraction_of_floor(), achieved, ceilings.peak_tflops(),
                     ceilings.peak_bandwidth_tbps(), OrDash(ceilings.source()));
}

// Where an imported record came from and what verifying it found.
std::string ProvenanceText(const v1::Provenance& provenance) {
  return fmt::format("{}: imported {} by {} from daemon {} (job {}, measured {}); {}",
                     TrustName(provenance.trust()), FormatTimestamp(provenance.imported_at()),
                     OrDash(provenance.imported_by()), OrDash(provenance.source_daemon()),
                     OrDash(provenance.source_job_id()),
                     FormatTimestamp(provenance.source_measured_at()),
                     OrDash(provenance.verification()));
}

// The table's short form: "cublasLt algo 3 of 8", the name alone for a
// baseline without algorithms.
std::string BaselineShort(const v1::Record& record) {
  if (!record.has_baseline_algorithm()) return OrDash(record.baseline_name());
  const v1::VendorAlgorithm& a = record.baseline_algorithm();
  return fmt::format("{} algo {} of {}", record.baseline_name(), a.heuristic_index(),
                     a.heuristic_results());
}

// Every candidate the baseline step tried, "#3 19.0" (µs), "#0+pass 25.1",
// "#1 failed"; the reasons are in --json.
std::string CandidatesText(const v1::Record& record) {
  std::string list;
  for (const v1::BaselineCandidate& c : record.baseline_candidates()) {
    const std::string time =
        c.error().empty() ? FormatMicros(c.timing().median_us()) : std::string("failed");
    list += fmt::format("{}#{}{} {}", list.empty() ? "" : ", ", c.algorithm().heuristic_index(),
                        c.algorithm().epilogue_pass() ? "+pass" : "", time);
  }
  return fmt::format("{} (µs): {}", Counted(record.baseline_candidates_size(), "candidate"), list);
}

std::string StaleText(const v1::Staleness& staleness) {
  return "stale: " + staleness.reason();
}

void AddRecordFields(const v1::Record& record, TextTable& fields) {
  const auto& config = record.config();
  fields.AddRow({"winner", client::ShortEnumName(client::kWinnerNaming, record.winner())});
  if (!config.kernel_name().empty()) {
    fields.AddRow({"kernel", fmt::format("{} (source {})", config.kernel_name(),
                                         OrDash(config.source_hash()))});
    fields.AddRow({"params", FormatParams(config.params())});
    if (std::string launch = LaunchText(config.launch()); !launch.empty()) {
      fields.AddRow({"launch", launch});
    }
  }
  fields.AddRow({"tuned", TimingText(record.tuned())});
  fields.AddRow(
      {"baseline",
       TimingText(record.baseline()) +
           (record.baseline_name().empty() ? "" : " " + record.baseline_name()) +
           (record.has_baseline_algorithm() ? ": " + record.baseline_algorithm().description()
                                            : "")});
  if (record.baseline_candidates_size() > 1) {
    fields.AddRow({"baseline tried", CandidatesText(record)});
  }
  fields.AddRow({"speedup", FormatSpeedup(record.speedup())});
  fields.AddRow({"roofline", record.has_roofline() ? RooflineText(record.roofline()) : "-"});
  if (!record.decision().reason().empty()) {
    fields.AddRow({"decision", fmt::format("{} ({} interleaved rounds)", record.decision().reason(),
                                           record.decision().rounds())});
  }
  fields.AddRow({"max error", fmt::format("{:.3g} (relative)", record.max_rel_error())});
  // Records measured before coverage was kept have none.
  if (record.validation().output_elements() > 0) {
    fields.AddRow({"validated", ValidationText(record.validation())});
  }
  const auto& device = record.device();
  fields.AddRow({"device", fmt::format("class {}: {} {} {} ({} units)", record.device_class(),
                                       device.vendor(), device.arch(), device.name(),
                                       device.compute_units())});
  const auto& tools = record.toolchain();
  fields.AddRow(
      {"toolchain",
       fmt::format("driver {}, runtime {}, compiler {}, kernels v{}",
                   OrDash(tools.driver_version()), OrDash(tools.runtime_version()),
                   OrDash(tools.compiler_version()), OrDash(tools.kernel_library_version()))});
  fields.AddRow(
      {"measured", fmt::format("{} by job {} on {}", FormatTimestamp(record.measured_at()),
                               OrDash(record.job_id()), OrDash(record.daemon()))});
  if (record.provenance().has_imported_at()) {
    fields.AddRow({"provenance", ProvenanceText(record.provenance())});
  }
}

}  // namespace

std::string TrustName(v1::Trust trust) {
  return trust == v1::TRUST_MEASURED ? "measured"
                                     : client::ShortEnumName(client::kTrustNaming, trust);
}

void PrintRecordsTable(const v1::ListRecordsResponse& records, std::ostream& out,
                       std::optional<size_t> max_width) {
  TextTable table({"KEY", "DEVICE CLASS", "WINNER", "TRUST", "TUNED µs", "BASELINE µs", "SPEEDUP",
                   "BASELINE", "TFLOP/s", "% OF ROOFLINE", "VALIDATED", "MEASURED", "STALE"});
  // `records show`-like detail stays with --wide and lookup.
  table.CutToFit("STALE", 12);
  table.DropToFit("BASELINE");
  table.DropToFit("VALIDATED");
  table.DropToFit("TFLOP/s");
  table.DropToFit("% OF ROOFLINE");
  table.DropToFit("BASELINE µs");
  table.CutToFit("DEVICE CLASS", 12);
  table.DropToFit("MEASURED");
  table.DropToFit("TRUST");
  table.CutToFit("KEY", 24);
  for (int i = 0; i < records.records_size(); ++i) {
    const auto& r = records.records(i);
    const bool stale = i < records.staleness_size() && records.staleness(i).stale();
    table.AddRow({client::KeyText(r.key()), r.device_class(),
                  client::ShortEnumName(client::kWinnerNaming, r.winner()),
                  TrustName(r.provenance().trust()), FormatMicros(r.tuned().median_us()),
                  FormatMicros(r.baseline().median_us()), FormatSpeedup(r.speedup()),
                  BaselineShort(r), TflopsShort(r), RooflineShort(r),
                  ValidationShare(r.validation()), FormatTimestamp(r.measured_at()),
                  stale ? StaleText(records.staleness(i)) : "-"});
  }
  table.Print(out, max_width);
}

void PrintUnservedNotes(const v1::ListRecordsResponse& records, std::ostream& out) {
  // In the order first seen, as the table lists them.
  std::vector<std::pair<std::string, int>> reasons;
  for (const auto& r : records.records()) {
    const v1::Trust trust = r.provenance().trust();
    if (trust != v1::TRUST_UNVERIFIED && trust != v1::TRUST_VERIFY_FAILED) continue;
    const std::string reason = OrDash(r.provenance().verification());
    auto it = std::find_if(reasons.begin(), reasons.end(),
                           [&](const auto& seen) { return seen.first == reason; });
    if (it == reasons.end()) {
      reasons.emplace_back(reason, 1);
    } else {
      ++it->second;
    }
  }
  for (const auto& [reason, count] : reasons) {
    out << fmt::format("note: {} not served: {}\n", Counted(count, "imported record"), reason);
  }
}

void PrintLookup(const v1::KernelKey& asked, const v1::LookupResponse& response,
                 std::ostream& out) {
  bool hit = response.result() == v1::LookupResponse::RESULT_HIT;
  out << (hit ? "HIT " : "MISS ") << client::KeyText(asked) << '\n';
  TextTable fields({"device class", OrDash(response.device_class())});
  if (!hit) {
    fields.AddRow(
        {"fallback",
         response.fallback().library() +
             (response.fallback().reason().empty() ? "" : ": " + response.fallback().reason())});
  }
  if (response.staleness().stale()) fields.AddRow({"stale", StaleText(response.staleness())});
  if (!response.job_id().empty()) fields.AddRow({"tuning job", response.job_id()});
  if (response.has_record()) AddRecordFields(response.record(), fields);
  if (response.plan().kernels_size() > 0) {
    fields.AddRow({"fusion plan", std::to_string(response.plan().kernels_size()) + " kernel(s)"});
  }
  fields.Print(out);
  for (int i = 0; i < response.plan().kernels_size(); ++i) {
    const auto& kernel = response.plan().kernels(i);
    std::string ops;
    for (int op : kernel.ops()) ops += (ops.empty() ? "" : ",") + std::to_string(op);
    out << "\nkernel " << i + 1 << "/" << response.plan().kernels_size() << " (graph ops " << ops
        << "): ";
    if (i < response.kernel_results_size())
      PrintLookup(kernel.key(), response.kernel_results(i), out);
    if (!kernel.split_reason().empty()) out << "split: " << kernel.split_reason() << '\n';
  }
}

}  // namespace tiletune::cli
