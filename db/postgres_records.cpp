// Records (the best answer per key and device class), their import and
// export, and trials.
#include <utility>

#include "db/page_token.h"
#include "db/postgres_columns.h"
#include "db/postgres_tuning_store.h"
#include "db/store_rules.h"

namespace tiletune::db {
namespace {

void WriteRecord(PgConnection& connection, const std::string& canonical_key,
                 const v1::Record& record) {
  const RooflineColumns roofline = RooflineColumnsOf(record.has_roofline(), record.roofline());
  const ProvenanceColumns provenance = ProvenanceColumnsOf(record);
  connection.Exec(
      "INSERT INTO records (canonical_key, device_class, op, winner, tuned_median_us,"
      " baseline_median_us, speedup, measured_at_us, achieved_tflops, achieved_tbps,"
      " roofline_fraction, trust, imported_at_us, source_daemon, record)"
      " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
      " ON CONFLICT (canonical_key, device_class) DO UPDATE SET op = excluded.op,"
      " winner = excluded.winner, tuned_median_us = excluded.tuned_median_us,"
      " baseline_median_us = excluded.baseline_median_us, speedup = excluded.speedup,"
      " measured_at_us = excluded.measured_at_us, achieved_tflops = excluded.achieved_tflops,"
      " achieved_tbps = excluded.achieved_tbps,"
      " roofline_fraction = excluded.roofline_fraction, trust = excluded.trust,"
      " imported_at_us = excluded.imported_at_us, source_daemon = excluded.source_daemon,"
      " record = excluded.record",
      PgParams(canonical_key, record.device_class(), record.key().op(), record.winner(),
               record.tuned().median_us(), record.baseline().median_us(), record.speedup(),
               MicrosOf(record.has_measured_at(), record.measured_at()), roofline.achieved_tflops,
               roofline.achieved_tbps, roofline.fraction, provenance.trust,
               provenance.imported_at_us, provenance.source_daemon,
               Bytea{record.SerializeAsString()}));
}

bool RecordExists(PgConnection& connection, const std::string& canonical_key,
                  const std::string& device_class) {
  return connection
             .Exec("SELECT 1 FROM records WHERE canonical_key = $1 AND device_class = $2",
                   PgParams(canonical_key, device_class))
             .Rows() > 0;
}

}  // namespace

std::optional<v1::Record> PostgresTuningStore::FindRecord(const std::string& canonical_key,
                                                          const std::string& device_class) {
  auto rows = pool_.Acquire()->Exec(
      "SELECT record FROM records WHERE canonical_key = $1 AND device_class = $2",
      PgParams(canonical_key, device_class));
  if (rows.Rows() == 0) return std::nullopt;
  return ReadProto<v1::Record>(rows, 0, 0, name_, "record " + canonical_key);
}

void PostgresTuningStore::PutRecord(const std::string& canonical_key, const v1::Record& record) {
  RequireRecordKey(canonical_key, record);
  WriteRecord(*pool_.Acquire(), canonical_key, record);
}

RecordPage PostgresTuningStore::ListRecords(const std::string& op, const std::string& device_class,
                                            int page_size, const std::string& page_token) {
  int limit = EffectivePageSize(page_size);
  PgParams params;
  std::string sql = "SELECT op, canonical_key, device_class, record FROM records WHERE TRUE";
  if (!op.empty()) sql += " AND op = " + params.Add(op);
  if (!device_class.empty()) sql += " AND device_class = " + params.Add(device_class);
  if (!page_token.empty()) {
    // Resume after the last row, comparing only the sort columns no filter
    // fixes, so that the index range starts right there.
    auto after = DecodePageToken(page_token, 3);
    std::string columns = "canonical_key";
    std::string after_last = params.Add(after[1]);
    if (op.empty()) {
      columns = "op, " + columns;
      after_last = params.Add(after[0]) + ", " + after_last;
    }
    if (device_class.empty()) {
      columns += ", device_class";
      after_last += ", " + params.Add(after[2]);
    }
    sql += " AND (" + columns + ") > (" + after_last + ")";
  }
  // One row past the page tells whether another page follows.
  sql += " ORDER BY op, canonical_key, device_class LIMIT " + params.Add(limit + 1);

  auto rows = pool_.Acquire()->Exec(sql, params);
  RecordPage page;
  for (int row = 0; row < rows.Rows(); ++row) {
    if (row == limit) {
      page.next_page_token = page.tokens_after.back();
      break;
    }
    page.tokens_after.push_back(
        EncodePageToken({rows.Text(row, 0), rows.Text(row, 1), rows.Text(row, 2)}));
    page.records.push_back(
        ReadProto<v1::Record>(rows, row, 3, name_, "record " + rows.Text(row, 1)));
  }
  return page;
}

std::vector<v1::ImportReject> PostgresTuningStore::ImportRecords(
    const std::vector<ImportedRecord>& records, bool replace, bool dry_run) {
  auto connection = pool_.Acquire();
  PgTransaction transaction(*connection, PgTransactionKind::kWrite);
  // Readers go on; writers of records wait until this commits.
  connection->ExecScript("LOCK TABLE records IN SHARE ROW EXCLUSIVE MODE");
  std::vector<v1::ImportReject> rejects;
  ImportLinesSeen seen;
  auto exists = [&connection](const std::string& key, const std::string& device_class) {
    return RecordExists(*connection, key, device_class);
  };
  for (const auto& item : records) {
    if (auto reject = CheckImportLine(item, replace, seen, exists)) {
      rejects.push_back(std::move(*reject));
    }
  }
  if (rejects.empty() && !dry_run) {
    for (const auto& item : records) WriteRecord(*connection, item.canonical_key, item.record);
    transaction.Commit();
  }
  return rejects;
}

int64_t PostgresTuningStore::AddTrial(const std::string& canonical_key,
                                      const std::string& device_class, const v1::Trial& trial) {
  const RooflineColumns roofline = RooflineColumnsOf(trial.has_roofline(), trial.roofline());
  return pool_.Acquire()
      ->Exec(
          "INSERT INTO trials (job_id, item_index, canonical_key, device_class, params, status,"
          " median_us, rel_error, error, source_hash, finished_at_us, achieved_tflops,"
          " achieved_tbps, roofline_fraction, trial)"
          " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
          " RETURNING id",
          PgParams(trial.job_id(), trial.item_index(), canonical_key, device_class,
                   ParamsJson(trial.params()), trial.status(), trial.timing().median_us(),
                   trial.rel_error(), trial.error(), trial.source_hash(),
                   MicrosOf(trial.has_finished_at(), trial.finished_at()), roofline.achieved_tflops,
                   roofline.achieved_tbps, roofline.fraction, Bytea{trial.SerializeAsString()}))
      .Int64(0, 0);
}

std::vector<v1::Trial> PostgresTuningStore::TrialsForItem(const std::string& job_id,
                                                          int item_index) {
  auto rows = pool_.Acquire()->Exec(
      "SELECT id, trial FROM trials WHERE job_id = $1 AND item_index = $2 ORDER BY id",
      PgParams(job_id, item_index));
  std::vector<v1::Trial> trials;
  for (int row = 0; row < rows.Rows(); ++row) {
    auto trial =
        ReadProto<v1::Trial>(rows, row, 1, name_, "trial " + std::to_string(rows.Int64(row, 0)));
    // The id is assigned on insert, after the blob was serialized.
    trial.set_id(rows.Int64(row, 0));
    trials.push_back(std::move(trial));
  }
  return trials;
}

}  // namespace tiletune::db
