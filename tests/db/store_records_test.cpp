// Records, their import and export, and trials.
#include <algorithm>
#include <set>

#include "db/tuning_store.h"
#include "store_test.h"

namespace tiletune::db {
namespace {

v1::Record Record(const std::string& op, const std::string& device_class, double tuned_us) {
  v1::Record record;
  record.mutable_key()->set_op(op);
  record.set_device_class(device_class);
  record.set_winner(v1::WINNER_TUNED);
  record.mutable_tuned()->set_median_us(tuned_us);
  record.mutable_baseline()->set_median_us(2 * tuned_us);
  record.set_speedup(2);
  record.mutable_measured_at()->set_seconds(1700000000);
  (*record.mutable_config()->mutable_params())["block_m"] = 64;
  return record;
}

ImportedRecord Line(int line, const std::string& key, const v1::Record& record) {
  return {line, key, record};
}

class StoreRecords : public StoreTest {};

TEST_P(StoreRecords, PutThenFindRoundTripsTheWholeRecord) {
  auto store = Open();
  auto record = Record("gemm", "cls-a", 10);
  // The vendor baseline's algorithm (raw bytes) and every candidate tried.
  record.set_baseline_name("cublasLt");
  record.mutable_baseline_algorithm()->set_description("cublasLt algo 1 of 2 (plain product)");
  record.mutable_baseline_algorithm()->set_algo(std::string("\0\x01\xff", 3) +
                                                std::string(61, 'x'));
  record.mutable_baseline_algorithm()->set_library_version(130100);
  *record.add_baseline_candidates()->mutable_algorithm() = record.baseline_algorithm();
  record.mutable_baseline_candidates(0)->mutable_timing()->set_median_us(20);
  record.add_baseline_candidates()->set_error("wrong result");
  store->PutRecord("gemm:1", record);
  auto found = store->FindRecord("gemm:1", "cls-a");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->SerializeAsString(), record.SerializeAsString());
  EXPECT_FALSE(store->FindRecord("gemm:1", "cls-b"));
  EXPECT_FALSE(store->FindRecord("gemm:2", "cls-a"));
}

TEST_P(StoreRecords, PutReplacesTheRecordForItsKeyAndClass) {
  auto store = Open();
  store->PutRecord("gemm:1", Record("gemm", "cls-a", 10));
  store->PutRecord("gemm:1", Record("gemm", "cls-a", 7));
  EXPECT_EQ(store->FindRecord("gemm:1", "cls-a")->tuned().median_us(), 7);
  EXPECT_EQ(Query("SELECT count(*) || ' ' || CAST(max(tuned_median_us) AS INTEGER) FROM records"),
            "1 7");
}

// The whole provenance is in the record; its trust, and for imports when
// and from which daemon, are columns too, for ad-hoc SQL.
TEST_P(StoreRecords, ProvenanceIsKeptInTheRecordAndInColumns) {
  auto store = Open();
  store->PutRecord("gemm:1", Record("gemm", "cls-a", 10));
  auto imported = Record("gemm", "cls-a", 5);
  imported.mutable_provenance()->set_trust(v1::TRUST_UNVERIFIED);
  imported.mutable_provenance()->mutable_imported_at()->set_seconds(1700000100);
  imported.mutable_provenance()->set_source_daemon("far-away");
  imported.mutable_provenance()->set_verification("waits for its verify job");
  ASSERT_TRUE(store->ImportRecords({Line(1, "gemm:2", imported)}, false, false).empty());
  const auto found = store->FindRecord("gemm:2", "cls-a");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->provenance().SerializeAsString(), imported.provenance().SerializeAsString());
  const auto column = [&](const std::string& sql, const std::string& key) {
    return Query("SELECT " + sql + " FROM records WHERE canonical_key = '" + key + "'");
  };
  EXPECT_EQ(column("trust", "gemm:1"), "0");
  EXPECT_EQ(column("coalesce(source_daemon, '-')", "gemm:1"), "-");
  EXPECT_EQ(column("coalesce(CAST(imported_at_us AS TEXT), '-')", "gemm:1"), "-");
  EXPECT_EQ(column("trust", "gemm:2"), "1");
  EXPECT_EQ(column("source_daemon", "gemm:2"), "far-away");
  EXPECT_EQ(column("imported_at_us", "gemm:2"), "1700000100000000");

  // Verified: the column follows the record.
  imported.mutable_provenance()->set_trust(v1::TRUST_VERIFIED);
  store->PutRecord("gemm:2", imported);
  EXPECT_EQ(column("trust", "gemm:2"), "3");
}

TEST_P(StoreRecords, PutNeedsAKeyAndADeviceClass) {
  auto store = Open();
  EXPECT_THROW(store->PutRecord("", Record("gemm", "cls-a", 1)), std::invalid_argument);
  EXPECT_THROW(store->PutRecord("gemm:1", Record("gemm", "", 1)), std::invalid_argument);
}

// 3 ops x 2 classes x 4 keys, imported in one transaction.
void Fill(TuningStore& store) {
  std::vector<ImportedRecord> lines;
  for (std::string op : {"gemm", "rmsnorm", "softmax"}) {
    for (std::string device_class : {"cls-a", "cls-b"}) {
      for (int k = 0; k < 4; ++k) {
        lines.push_back(Line(static_cast<int>(lines.size()) + 1, op + ":" + std::to_string(k),
                             Record(op, device_class, k + 1)));
      }
    }
  }
  ASSERT_TRUE(store.ImportRecords(lines, false, false).empty());
}

// Every record matching the filters, one page at a time, as "key/class".
std::vector<std::string> AllPages(TuningStore& store, const std::string& op,
                                  const std::string& device_class, int page_size, int* pages) {
  std::vector<std::string> seen;
  std::string token;
  *pages = 0;
  do {
    auto page = store.ListRecords(op, device_class, page_size, token);
    ++*pages;
    EXPECT_LE(static_cast<int>(page.records.size()), page_size);
    for (const auto& record : page.records) {
      seen.push_back(record.key().op() + ":" + std::to_string(int(record.tuned().median_us()) - 1) +
                     "/" + record.device_class());
    }
    token = page.next_page_token;
  } while (!token.empty());
  return seen;
}

TEST_P(StoreRecords, ListPagesThroughEveryRecordInOrder) {
  auto store = Open();
  Fill(*store);
  int pages = 0;
  auto all = AllPages(*store, "", "", 5, &pages);
  ASSERT_EQ(all.size(), 24u);
  EXPECT_EQ(pages, 5);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), 24u);
  EXPECT_EQ(all.front(), "gemm:0/cls-a");
  EXPECT_EQ(all.back(), "softmax:3/cls-b");

  // An exact multiple of the page size ends without an empty extra page.
  AllPages(*store, "", "", 8, &pages);
  EXPECT_EQ(pages, 3);
}

TEST_P(StoreRecords, ListFiltersByOpAndDeviceClass) {
  auto store = Open();
  Fill(*store);
  int pages = 0;
  auto rmsnorm = AllPages(*store, "rmsnorm", "", 3, &pages);
  EXPECT_EQ(rmsnorm.size(), 8u);
  for (const auto& k : rmsnorm) EXPECT_EQ(k.rfind("rmsnorm:", 0), 0u) << k;
  auto class_b = AllPages(*store, "", "cls-b", 5, &pages);
  EXPECT_EQ(class_b.size(), 12u);
  for (const auto& k : class_b) EXPECT_TRUE(k.ends_with("/cls-b")) << k;
  auto both = AllPages(*store, "softmax", "cls-a", 3, &pages);
  EXPECT_EQ(both, (std::vector<std::string>{"softmax:0/cls-a", "softmax:1/cls-a", "softmax:2/cls-a",
                                            "softmax:3/cls-a"}));
  EXPECT_TRUE(store->ListRecords("conv", "", 10, "").records.empty());
}

TEST_P(StoreRecords, ListUsesTheDefaultPageSizeAndRefusesForeignTokens) {
  auto store = Open();
  Fill(*store);
  auto page = store->ListRecords("", "", 0, "");
  EXPECT_EQ(page.records.size(), 24u);
  EXPECT_TRUE(page.next_page_token.empty());
  EXPECT_THROW(store->ListRecords("", "", 5, "not-a-token"), std::invalid_argument);
}

TEST_P(StoreRecords, EachListedRecordHasTheTokenThatListsOnAfterIt) {
  auto store = Open();
  Fill(*store);
  auto page = store->ListRecords("", "cls-a", 5, "");
  ASSERT_EQ(page.tokens_after.size(), 5u);
  EXPECT_EQ(page.next_page_token, page.tokens_after.back());
  auto rest = store->ListRecords("", "cls-a", 5, page.tokens_after[1]);
  ASSERT_EQ(rest.records.size(), 5u);
  EXPECT_EQ(rest.records[0].SerializeAsString(), page.records[2].SerializeAsString());
  EXPECT_EQ(rest.tokens_after[2], page.tokens_after[4]);
}

TEST_P(StoreRecords, ExportVisitsEveryMatchingRecordAcrossInternalPages) {
  auto store = Open();
  std::vector<ImportedRecord> lines;
  for (int i = 0; i < 1205; ++i) {
    lines.push_back(Line(i + 1, "gemm:" + std::to_string(i), Record("gemm", "cls-a", 1)));
  }
  lines.push_back(Line(1206, "softmax:0", Record("softmax", "cls-a", 1)));
  ASSERT_TRUE(store->ImportRecords(lines, false, false).empty());
  int gemm = 0;
  store->ExportRecords("gemm", "cls-a", [&](const v1::Record& record) {
    EXPECT_EQ(record.key().op(), "gemm");
    ++gemm;
  });
  EXPECT_EQ(gemm, 1205);
}

TEST_P(StoreRecords, ImportIsAllOrNothingAndNamesTheLines) {
  auto store = Open();
  store->PutRecord("gemm:existing", Record("gemm", "cls-a", 5));
  auto rejects = store->ImportRecords({Line(1, "gemm:new", Record("gemm", "cls-a", 1)),
                                       Line(2, "gemm:other", Record("gemm", "cls-a", 1)),
                                       Line(3, "gemm:new", Record("gemm", "cls-a", 2)),
                                       Line(4, "gemm:existing", Record("gemm", "cls-a", 3)),
                                       Line(5, "gemm:new", Record("gemm", "cls-b", 1))},
                                      false, false);
  ASSERT_EQ(rejects.size(), 2u);
  EXPECT_EQ(rejects[0].line(), 3);
  EXPECT_EQ(rejects[0].field(), "record.key");
  EXPECT_EQ(rejects[0].message(), "duplicate of line 1");
  EXPECT_EQ(rejects[1].line(), 4);
  EXPECT_EQ(rejects[1].field(), "record.key");
  EXPECT_EQ(rejects[1].message(),
            "record already exists; import with replace to overwrite it (`tiletune records import "
            "--replace`)");
  EXPECT_FALSE(store->FindRecord("gemm:new", "cls-a"));
  EXPECT_FALSE(store->FindRecord("gemm:other", "cls-a"));
  EXPECT_EQ(store->FindRecord("gemm:existing", "cls-a")->tuned().median_us(), 5);
}

TEST_P(StoreRecords, ImportReplacesWhenAsked) {
  auto store = Open();
  store->PutRecord("gemm:existing", Record("gemm", "cls-a", 5));
  auto rejects = store->ImportRecords({Line(1, "gemm:existing", Record("gemm", "cls-a", 3)),
                                       Line(2, "gemm:new", Record("gemm", "cls-a", 1))},
                                      true, false);
  EXPECT_TRUE(rejects.empty());
  EXPECT_EQ(store->FindRecord("gemm:existing", "cls-a")->tuned().median_us(), 3);
  EXPECT_TRUE(store->FindRecord("gemm:new", "cls-a"));
}

TEST_P(StoreRecords, DryRunChecksButWritesNothing) {
  auto store = Open();
  store->PutRecord("gemm:existing", Record("gemm", "cls-a", 5));
  EXPECT_TRUE(
      store->ImportRecords({Line(1, "gemm:new", Record("gemm", "cls-a", 1))}, false, true).empty());
  EXPECT_FALSE(store->FindRecord("gemm:new", "cls-a"));
  auto rejects =
      store->ImportRecords({Line(7, "gemm:existing", Record("gemm", "cls-a", 1))}, false, true);
  ASSERT_EQ(rejects.size(), 1u);
  EXPECT_EQ(rejects[0].line(), 7);
}

v1::Trial Trial(const std::string& job_id, int item, v1::TrialStatus status, double median_us) {
  v1::Trial trial;
  trial.set_job_id(job_id);
  trial.set_item_index(item);
  trial.set_status(status);
  trial.mutable_timing()->set_median_us(median_us);
  (*trial.mutable_params())["block_n"] = 32;
  (*trial.mutable_params())["block_m"] = 64;
  trial.mutable_finished_at()->set_seconds(1700000000);
  return trial;
}

TEST_P(StoreRecords, TrialsAreKeptPerItemInOrder) {
  auto store = Open();
  int64_t first = store->AddTrial("gemm:1", "cls-a", Trial("job-1", 0, v1::TRIAL_OK, 9));
  int64_t second =
      store->AddTrial("gemm:1", "cls-a", Trial("job-1", 0, v1::TRIAL_COMPILE_ERROR, 0));
  store->AddTrial("gemm:2", "cls-a", Trial("job-1", 1, v1::TRIAL_OK, 3));
  store->AddTrial("gemm:1", "cls-a", Trial("job-2", 0, v1::TRIAL_OK, 3));
  EXPECT_LT(first, second);

  auto trials = store->TrialsForItem("job-1", 0);
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].id(), first);
  EXPECT_EQ(trials[0].status(), v1::TRIAL_OK);
  EXPECT_EQ(trials[0].timing().median_us(), 9);
  EXPECT_EQ(trials[0].params().at("block_m"), 64);
  EXPECT_EQ(trials[1].id(), second);
  EXPECT_EQ(trials[1].status(), v1::TRIAL_COMPILE_ERROR);
  EXPECT_TRUE(store->TrialsForItem("job-3", 0).empty());
  // The params column is JSON with sorted keys, for ad-hoc SQL.
  EXPECT_EQ(Query("SELECT params FROM trials WHERE id = " + std::to_string(first)),
            R"({"block_m":64,"block_n":32})");
}

v1::Roofline Roofline(bool ceilings) {
  v1::Roofline roofline;
  roofline.set_flops(1'000'000);
  roofline.set_bytes(4'000'000);
  roofline.set_achieved_tflops(512.5);
  roofline.set_achieved_tbps(2.25);
  if (ceilings) {
    roofline.set_fraction_of_floor(0.75);
    roofline.mutable_ceilings()->set_peak_tflops(790);
    roofline.mutable_ceilings()->set_peak_bandwidth_tbps(4.24);
    roofline.mutable_ceilings()->set_source("measured copy 4.24 TB/s");
  }
  return roofline;
}

// The figures are in the stored proto and, for ad-hoc SQL, in columns:
// NULL where a row has none, the fraction NULL where the ceilings are unknown.
std::string RooflineColumns(const std::string& table, const std::string& where) {
  return "SELECT coalesce(CAST(achieved_tflops AS TEXT), 'null') || ' ' ||"
         " coalesce(CAST(achieved_tbps AS TEXT), 'null') || ' ' ||"
         " coalesce(CAST(roofline_fraction AS TEXT), 'null') FROM " +
         table + " WHERE " + where;
}

TEST_P(StoreRecords, RooflinesRoundTripWithRecordsAndTrialsAndFillTheirColumns) {
  auto store = Open();
  auto known = Record("gemm", "cls-a", 10);
  *known.mutable_roofline() = Roofline(true);
  auto unknown = Record("gemm", "cls-host", 10);
  *unknown.mutable_roofline() = Roofline(false);
  store->PutRecord("gemm:1", known);
  store->PutRecord("gemm:1", unknown);
  store->PutRecord("gemm:old", Record("gemm", "cls-a", 10));
  EXPECT_EQ(store->FindRecord("gemm:1", "cls-a")->roofline().SerializeAsString(),
            known.roofline().SerializeAsString());
  EXPECT_EQ(store->FindRecord("gemm:1", "cls-host")->roofline().SerializeAsString(),
            unknown.roofline().SerializeAsString());
  EXPECT_FALSE(store->FindRecord("gemm:old", "cls-a")->has_roofline());
  EXPECT_EQ(
      Query(RooflineColumns("records", "device_class = 'cls-a' AND canonical_key = 'gemm:1'")),
      "512.5 2.25 0.75");
  EXPECT_EQ(Query(RooflineColumns("records", "device_class = 'cls-host'")), "512.5 2.25 null");
  EXPECT_EQ(Query(RooflineColumns("records", "canonical_key = 'gemm:old'")), "null null null");

  auto timed = Trial("job-1", 0, v1::TRIAL_OK, 9);
  *timed.mutable_roofline() = Roofline(true);
  int64_t id = store->AddTrial("gemm:1", "cls-a", timed);
  store->AddTrial("gemm:1", "cls-a", Trial("job-1", 0, v1::TRIAL_COMPILE_ERROR, 0));
  auto trials = store->TrialsForItem("job-1", 0);
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].roofline().SerializeAsString(), timed.roofline().SerializeAsString());
  EXPECT_FALSE(trials[1].has_roofline());
  EXPECT_EQ(Query(RooflineColumns("trials", "id = " + std::to_string(id))), "512.5 2.25 0.75");
  EXPECT_EQ(Query(RooflineColumns("trials", "id <> " + std::to_string(id))), "null null null");
}

TEST_P(StoreRecords, DevicesAndKernelsUpsert) {
  auto store = Open();
  v1::DeviceFingerprint device;
  device.set_device_class("cls-a");
  device.set_vendor("cpu");
  device.set_compute_units(8);
  v1::Toolchain toolchain;
  toolchain.set_compiler_version("gcc 12");
  store->UpsertDevice(device, toolchain);
  std::string first_seen = Query("SELECT first_seen_us FROM devices");
  device.set_compute_units(16);
  toolchain.set_compiler_version("gcc 13");
  store->UpsertDevice(device, toolchain);
  EXPECT_EQ(Query("SELECT count(*) || ' ' || max(compute_units) || ' ' || max(compiler_version)"
                  " FROM devices"),
            "1 16 gcc 13");
  EXPECT_EQ(Query("SELECT first_seen_us FROM devices"), first_seen);
  EXPECT_THROW(store->UpsertDevice(v1::DeviceFingerprint(), toolchain), std::invalid_argument);

  store->UpsertKernel("hash-1", "gemm_tile", "1", "void k() {}");
  store->UpsertKernel("hash-1", "gemm_tile", "2", "void k() {}");
  EXPECT_EQ(
      Query("SELECT count(*) || ' ' || max(library_version) || ' ' || max(source) FROM kernels"),
      "1 2 void k() {}");
}

TILETUNE_STORE_TEST_SUITE(StoreRecords);

}  // namespace
}  // namespace tiletune::db
