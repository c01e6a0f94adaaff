#include "server/record_import.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <variant>

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include "kernels/core/key_space.h"
#include "runtime/device_class.h"
#include "server/message_text.h"
#include "tuner/device_description_of.h"

namespace tiletune::server {
namespace {

v1::ImportReject Reject(int line, std::string field, std::string message) {
  v1::ImportReject r;
  r.set_line(line);
  r.set_field(std::move(field));
  r.set_message(std::move(message));
  return r;
}

// How far a record's speedup may stray from baseline / tuned median (JSON
// keeps doubles exact; this only absorbs a writer that rounds).
constexpr double kSpeedupRelativeSlack = 1e-6;

std::optional<kernels::FieldError> Invalid(std::string field, std::string message) {
  return kernels::FieldError{std::move(field), std::move(message)};
}

std::string Describe(const v1::DeviceFingerprint& fp) {
  return kernels::Quoted(fp.vendor()) + " " + kernels::Quoted(fp.arch()) + " " +
         kernels::Quoted(fp.name()) + " with " + std::to_string(fp.compute_units()) + " units";
}

// The record's fingerprint names a device whose class is the record's, of a
// vendor some backend reports; the backend is returned.
std::variant<std::string, kernels::FieldError> CheckFingerprint(const v1::ExportLine& line) {
  const v1::Record& record = line.record();
  const v1::DeviceFingerprint& fp = record.device();
  if (fp.vendor().empty()) {
    return kernels::FieldError{"record.device",
                               "is required: the fingerprint of the device it was measured on"};
  }
  const auto backend = runtime::BackendOfVendor(fp.vendor());
  if (!backend) {
    return kernels::FieldError{
        "record.device.vendor",
        "unknown vendor " + kernels::Quoted(fp.vendor()) + " (known: cpu, nvidia, amd)"};
  }
  if (const std::string id = runtime::DeviceClassId(fp); id != record.device_class()) {
    return kernels::FieldError{"record.device", "the fingerprint " + Describe(fp) +
                                                    " is of device class " + id +
                                                    ", not the record's device_class " +
                                                    kernels::Quoted(record.device_class())};
  }
  if (!fp.device_class().empty() && fp.device_class() != record.device_class()) {
    return kernels::FieldError{"record.device.device_class", "does not match record.device_class"};
  }
  if (line.has_device() && !google::protobuf::util::MessageDifferencer::Equals(line.device(), fp)) {
    return kernels::FieldError{"device", "differs from record.device"};
  }
  return std::string(*backend);
}

// The record's kernel template serves its key on a device of the record's
// fingerprint, and its parameters are a point of that template's space.
std::optional<kernels::FieldError> CheckKernel(const v1::Record& record,
                                               const std::string& backend) {
  const v1::TunedConfig& config = record.config();
  const v1::KernelKey key = kernels::NormalizeKernelKey(record.key());
  const runtime::DeviceInfo device{.backend = backend, .fingerprint = record.device()};
  std::string why;
  const kernels::KeySpace space =
      kernels::KeySpace::Of(key, tuner::DeviceDescriptionOf(device), &why);
  const auto index = space.IndexOf(config.kernel_name());
  if (!index) {
    const auto& all = kernels::AllKernelTemplates();
    const auto named = std::find_if(
        all.begin(), all.end(), [&](const auto& t) { return t->name() == config.kernel_name(); });
    if (named == all.end()) {
      return Invalid("record.config.kernel_name",
                     "no kernel template is named " + kernels::Quoted(config.kernel_name()));
    }
    return Invalid("record.config.kernel_name",
                   "template " + kernels::Quoted(config.kernel_name()) + " (" +
                       std::string((*named)->backend()) + ") does not serve this key on a " +
                       record.device().vendor() + " device" + (why.empty() ? "" : ": " + why));
  }
  const kernels::Variant params(config.params().begin(), config.params().end());
  constexpr std::size_t kParameterNameBytes = 64;
  if (auto mismatch = space.templates()[static_cast<size_t>(*index)].space.Mismatch(params)) {
    return Invalid(mismatch->parameter.empty()
                       ? "record.config.params"
                       : "record.config.params." +
                             kernels::Abbreviated(mismatch->parameter, kParameterNameBytes),
                   mismatch->message);
  }
  return std::nullopt;
}

std::optional<kernels::FieldError> CheckTiming(const v1::Timing& timing, const std::string& field) {
  for (const auto& [name, value] : {std::pair{"median_us", timing.median_us()},
                                    {"min_us", timing.min_us()},
                                    {"max_us", timing.max_us()},
                                    {"spread", timing.spread()}}) {
    if (value < 0) return Invalid(field + "." + name, "must not be negative");
  }
  return std::nullopt;
}

// Times that can be true and agree with the speedup, and an error this
// daemon would accept for the key.
std::optional<kernels::FieldError> CheckMeasurement(const v1::Record& record,
                                                    const DaemonConfig& config) {
  for (const auto& [timing, field] :
       {std::pair{&record.tuned(), "record.tuned"},
        {&record.baseline(), "record.baseline"},
        {&record.decision().winner(), "record.decision.winner"},
        {&record.decision().runner_up(), "record.decision.runner_up"},
        {&record.decision().baseline(), "record.decision.baseline"}}) {
    if (auto e = CheckTiming(*timing, field)) return e;
  }
  for (int i = 0; i < record.baseline_candidates_size(); ++i) {
    if (auto e = CheckTiming(record.baseline_candidates(i).timing(),
                             "record.baseline_candidates[" + std::to_string(i) + "].timing")) {
      return e;
    }
  }
  const double tuned = record.tuned().median_us();
  const double baseline = record.baseline().median_us();
  if (baseline <= 0) {
    return Invalid("record.baseline.median_us",
                   "must be positive: every record keeps the baseline it was measured against");
  }
  if (record.baseline_name().empty()) return Invalid("record.baseline_name", "is required");
  if (tuned > 0) {
    const double expected = baseline / tuned;
    if (std::abs(record.speedup() - expected) > kSpeedupRelativeSlack * expected) {
      return Invalid("record.speedup", "is " + std::to_string(record.speedup()) +
                                           "; record.baseline.median_us / "
                                           "record.tuned.median_us is " +
                                           std::to_string(expected));
    }
  } else if (record.speedup() != 0) {
    return Invalid("record.speedup", "is set but record.tuned.median_us is not");
  }
  const double tolerance = tuner::ToleranceFor(record.key(), config.tuning);
  if (record.max_rel_error() < 0) return Invalid("record.max_rel_error", "must not be negative");
  if (record.max_rel_error() > tolerance) {
    return Invalid("record.max_rel_error", "is " + std::to_string(record.max_rel_error()) +
                                               "; this daemon's tolerance for the key is " +
                                               std::to_string(tolerance));
  }
  return std::nullopt;
}

// What a line must hold beyond its syntax and sizes to be stored: numbers
// that are finite, a fingerprint of the record's class, and (when the
// record names a kernel) a template and parameters of that kernel's space.
std::optional<kernels::FieldError> CheckRecord(const v1::ExportLine& line,
                                               const DaemonConfig& config) {
  if (auto e = FindNonFiniteNumber(line, "")) return e;
  const v1::Record& record = line.record();
  auto backend = CheckFingerprint(line);
  if (auto* e = std::get_if<kernels::FieldError>(&backend)) return *e;
  if (record.winner() == v1::WINNER_TUNED &&
      (record.config().kernel_name().empty() || record.tuned().median_us() <= 0)) {
    return Invalid("record.config", "a tuned record needs a kernel name and a positive time");
  }
  // A VENDOR record keeps the fastest variant it timed, when there was one.
  if (!record.config().kernel_name().empty()) {
    if (auto e = CheckKernel(record, std::get<std::string>(backend))) return e;
  }
  return CheckMeasurement(record, config);
}

}  // namespace

ParsedImport ParseImportLines(const std::string& jsonl, const DaemonConfig& config) {
  ParsedImport out;
  std::istringstream in(jsonl);
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    v1::ExportLine parsed;
    const auto status = google::protobuf::util::JsonStringToMessage(text, &parsed);
    if (!status.ok()) {
      // The parser's message may hold the line's bad value whole.
      constexpr std::size_t kParserMessageBytes = 256;
      out.rejects.push_back(
          Reject(line, "",
                 "not a valid export line: " +
                     kernels::Abbreviated(std::string(status.message()), kParserMessageBytes)));
      continue;
    }
    if (parsed.schema_version() != kExportSchemaVersion) {
      out.rejects.push_back(Reject(line, "schema_version",
                                   "is " + std::to_string(parsed.schema_version()) +
                                       "; this daemon reads version " +
                                       std::to_string(kExportSchemaVersion)));
      continue;
    }
    const v1::Record& record = parsed.record();
    if (auto e = kernels::ValidateKernelKey(record.key(), config.key_limits, "record.key")) {
      out.rejects.push_back(Reject(line, e->field, e->message));
      continue;
    }
    if (record.device_class().empty()) {
      out.rejects.push_back(Reject(line, "record.device_class", "is required"));
      continue;
    }
    if (auto e = kernels::CheckLength(record.device_class(), config.key_limits.max_name_bytes,
                                      "max_name_bytes", "record.device_class")) {
      out.rejects.push_back(Reject(line, e->field, e->message));
      continue;
    }
    // Kept and served as it is: no text of the line may be huge.
    if (auto e = FindLongText(parsed, config.max_text_bytes, "max_text_bytes", "")) {
      out.rejects.push_back(Reject(line, e->field, e->message));
      continue;
    }
    if (record.winner() != v1::WINNER_TUNED && record.winner() != v1::WINNER_VENDOR) {
      out.rejects.push_back(Reject(line, "record.winner", "must be WINNER_TUNED or WINNER_VENDOR"));
      continue;
    }
    if (kernels::IsGraphKey(record.key())) {
      out.rejects.push_back(Reject(line, "record.key.ops",
                                   "records are per kernel; an op graph has no record of its own"));
      continue;
    }
    if (auto e = CheckRecord(parsed, config)) {
      out.rejects.push_back(Reject(line, e->field, e->message));
      continue;
    }
    db::ImportedRecord imported;
    imported.line = line;
    imported.canonical_key = kernels::CanonicalKeyString(record.key());
    imported.record = record;
    *imported.record.mutable_key() = kernels::NormalizeKernelKey(record.key());
    out.records.push_back(std::move(imported));
  }
  return out;
}

v1::ExportLine ToExportLine(const v1::Record& record) {
  v1::ExportLine line;
  line.set_schema_version(kExportSchemaVersion);
  *line.mutable_device() = record.device();
  *line.mutable_record() = record;
  return line;
}

}  // namespace tiletune::server
