#pragma once

#include <string>
#include <vector>

#include "db/tuning_store.h"
#include "kernels/core/kernel_key.h"
#include "server/daemon_config.h"
#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::server {

// Version of the export line format (ExportLine.schema_version).
constexpr int kExportSchemaVersion = 1;

struct ParsedImport {
  std::vector<db::ImportedRecord> records;
  std::vector<v1::ImportReject> rejects;
};

// Parses and checks every line of a JSON Lines export against the config's
// limits: JSON syntax, schema version, the key (as any request key), device
// class (max_name_bytes), the length of every other text (max_text_bytes),
// and against the kernel registry: every number finite, a fingerprint of the
// record's device class, the kernel template serving the key on a device of
// that fingerprint with parameters that are a point of its space (the space
// tuning explores), timings that agree with the speedup, an error within
// this daemon's tolerance for the key. Blank lines are skipped; line numbers
// are 1-based. The first fault of a line is its reject.
ParsedImport ParseImportLines(const std::string& jsonl, const DaemonConfig& config);

// One export line for a record.
v1::ExportLine ToExportLine(const v1::Record& record);

}  // namespace tiletune::server
