#include "server/record_import.h"

#include <sstream>

#include <google/protobuf/util/json_util.h>

#include "server/message_text.h"

namespace tiletune::server {
namespace {

v1::ImportReject Reject(int line, std::string field, std::string message) {
  v1::ImportReject r;
  r.set_line(line);
  r.set_field(std::move(field));
  r.set_message(std::move(message));
  return r;
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
    if (!parsed.device().device_class().empty() &&
        parsed.device().device_class() != record.device_class()) {
      out.rejects.push_back(
          Reject(line, "device.device_class", "does not match record.device_class"));
      continue;
    }
    if (record.winner() != v1::WINNER_TUNED && record.winner() != v1::WINNER_VENDOR) {
      out.rejects.push_back(Reject(line, "record.winner", "must be WINNER_TUNED or WINNER_VENDOR"));
      continue;
    }
    if (record.winner() == v1::WINNER_TUNED &&
        (record.config().kernel_name().empty() || record.tuned().median_us() <= 0)) {
      out.rejects.push_back(
          Reject(line, "record.config", "a tuned record needs a kernel name and a positive time"));
      continue;
    }
    if (kernels::IsGraphKey(record.key())) {
      out.rejects.push_back(Reject(line, "record.key.ops",
                                   "records are per kernel; an op graph has no record of its own"));
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
