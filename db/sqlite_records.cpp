// Records (the best answer per key and device class), their import and
// export, and trials.
#include <stdexcept>
#include <utility>

#include "db/page_token.h"
#include "db/sqlite_columns.h"
#include "db/sqlite_tuning_store.h"
#include "db/store_rules.h"

namespace tiletune::db {
namespace {

void WriteRecord(Connection& connection, const std::string& canonical_key,
                 const v1::Record& record) {
  const RooflineColumns roofline = RooflineColumnsOf(record.has_roofline(), record.roofline());
  const ProvenanceColumns provenance = ProvenanceColumnsOf(record);
  connection
      .Prepare(
          "INSERT INTO records (canonical_key, device_class, op, winner, tuned_median_us,"
          " baseline_median_us, speedup, measured_at_us, achieved_tflops, achieved_tbps,"
          " roofline_fraction, trust, imported_at_us, source_daemon, record)"
          " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
          " ON CONFLICT (canonical_key, device_class) DO UPDATE SET op = excluded.op,"
          " winner = excluded.winner, tuned_median_us = excluded.tuned_median_us,"
          " baseline_median_us = excluded.baseline_median_us, speedup = excluded.speedup,"
          " measured_at_us = excluded.measured_at_us, achieved_tflops = excluded.achieved_tflops,"
          " achieved_tbps = excluded.achieved_tbps,"
          " roofline_fraction = excluded.roofline_fraction, trust = excluded.trust,"
          " imported_at_us = excluded.imported_at_us, source_daemon = excluded.source_daemon,"
          " record = excluded.record")
      .Bind(canonical_key, record.device_class(), record.key().op(), record.winner(),
            record.tuned().median_us(), record.baseline().median_us(), record.speedup(),
            MicrosOf(record.has_measured_at(), record.measured_at()), roofline.achieved_tflops,
            roofline.achieved_tbps, roofline.fraction, provenance.trust, provenance.imported_at_us,
            provenance.source_daemon, Blob{record.SerializeAsString()})
      .Run();
}

bool RecordExists(Connection& connection, const std::string& canonical_key,
                  const std::string& device_class) {
  return connection.Prepare("SELECT 1 FROM records WHERE canonical_key = ? AND device_class = ?")
      .Bind(canonical_key, device_class)
      .Step();
}

}  // namespace

std::optional<v1::Record> SqliteTuningStore::FindRecord(const std::string& canonical_key,
                                                        const std::string& device_class) {
  auto reader = readers_->Acquire();
  auto row =
      reader->Prepare("SELECT record FROM records WHERE canonical_key = ? AND device_class = ?");
  if (!row.Bind(canonical_key, device_class).Step()) return std::nullopt;
  return ReadProto<v1::Record>(row, 0, "record " + canonical_key);
}

void SqliteTuningStore::PutRecord(const std::string& canonical_key, const v1::Record& record) {
  RequireRecordKey(canonical_key, record);
  writer_->Run([&](Connection& connection) { WriteRecord(connection, canonical_key, record); });
}

RecordPage SqliteTuningStore::ListRecords(const std::string& op, const std::string& device_class,
                                          int page_size, const std::string& page_token) {
  int limit = EffectivePageSize(page_size);
  std::vector<std::string> after = {"", "", ""};
  if (!page_token.empty()) after = DecodePageToken(page_token, 3);
  // Fixed parameter numbers; ?6 always appears, so binding all six is valid
  // whichever filters the text holds.
  std::string sql = "SELECT op, canonical_key, device_class, record FROM records WHERE 1";
  if (!op.empty()) sql += " AND op = ?1";
  if (!device_class.empty()) sql += " AND device_class = ?2";
  if (!page_token.empty()) {
    // Resume after the last row, comparing only the sort columns no filter
    // fixes, so that the index range starts right there.
    std::string columns = op.empty() ? "op, canonical_key" : "canonical_key";
    std::string after_last = op.empty() ? "?3, ?4" : "?4";
    if (device_class.empty()) {
      columns += ", device_class";
      after_last += ", ?5";
    }
    sql += " AND (" + columns + ") > (" + after_last + ")";
  }
  sql += " ORDER BY op, canonical_key, device_class LIMIT ?6";

  auto reader = readers_->Acquire();
  auto rows = reader->Prepare(sql);
  // One row past the page tells whether another page follows.
  rows.Bind(op, device_class, after[0], after[1], after[2], limit + 1);
  RecordPage page;
  while (rows.Step()) {
    if (static_cast<int>(page.records.size()) == limit) {
      page.next_page_token = page.tokens_after.back();
      break;
    }
    page.tokens_after.push_back(EncodePageToken({rows.Text(0), rows.Text(1), rows.Text(2)}));
    page.records.push_back(ReadProto<v1::Record>(rows, 3, "record " + rows.Text(1)));
  }
  return page;
}

std::vector<v1::ImportReject> SqliteTuningStore::ImportRecords(
    const std::vector<ImportedRecord>& records, bool replace, bool dry_run) {
  return writer_->Run([&](Connection& connection) {
    std::vector<v1::ImportReject> rejects;
    ImportLinesSeen seen;
    auto exists = [&connection](const std::string& key, const std::string& device_class) {
      return RecordExists(connection, key, device_class);
    };
    for (const auto& item : records) {
      if (auto reject = CheckImportLine(item, replace, seen, exists)) {
        rejects.push_back(std::move(*reject));
      }
    }
    if (rejects.empty() && !dry_run) {
      for (const auto& item : records) WriteRecord(connection, item.canonical_key, item.record);
    }
    return rejects;
  });
}

int64_t SqliteTuningStore::AddTrial(const std::string& canonical_key,
                                    const std::string& device_class, const v1::Trial& trial) {
  const RooflineColumns roofline = RooflineColumnsOf(trial.has_roofline(), trial.roofline());
  return writer_->Run([&](Connection& connection) {
    connection
        .Prepare(
            "INSERT INTO trials (job_id, item_index, canonical_key, device_class, params, status,"
            " median_us, rel_error, error, source_hash, finished_at_us, achieved_tflops,"
            " achieved_tbps, roofline_fraction, trial)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .Bind(trial.job_id(), trial.item_index(), canonical_key, device_class,
              ParamsJson(trial.params()), trial.status(), trial.timing().median_us(),
              trial.rel_error(), trial.error(), trial.source_hash(),
              MicrosOf(trial.has_finished_at(), trial.finished_at()), roofline.achieved_tflops,
              roofline.achieved_tbps, roofline.fraction, Blob{trial.SerializeAsString()})
        .Run();
    return connection.LastInsertRowId();
  });
}

std::vector<v1::Trial> SqliteTuningStore::TrialsForItem(const std::string& job_id, int item_index) {
  auto reader = readers_->Acquire();
  auto rows = reader->Prepare(
      "SELECT id, trial FROM trials WHERE job_id = ? AND item_index = ? ORDER BY id");
  rows.Bind(job_id, item_index);
  std::vector<v1::Trial> trials;
  while (rows.Step()) {
    auto trial = ReadProto<v1::Trial>(rows, 1, "trial " + std::to_string(rows.Int64(0)));
    // The row id is assigned on insert, after the blob was serialized.
    trial.set_id(rows.Int64(0));
    trials.push_back(std::move(trial));
  }
  return trials;
}

}  // namespace tiletune::db
