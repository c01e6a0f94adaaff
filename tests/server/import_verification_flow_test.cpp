// Imported records on the real daemon: what an export line may claim is
// checked against this daemon's kernel registry, and a record is served
// only once a verify job has re-measured it on a device of its class here,
// unless imported with trust; provenance is kept and shown.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

#include "tests/support/daemon_calls.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

using namespace std::chrono_literals;

v1::LookupResponse Lookup(v1::TuningService::Stub& stub, const v1::KernelKey& key,
                          const std::string& device_class = "") {
  v1::LookupRequest request;
  *request.mutable_key() = key;
  request.mutable_device()->set_device_class(device_class);
  return testing::Lookup(stub, request);
}

std::string Export(v1::TuningService::Stub& stub) {
  grpc::ClientContext ctx;
  auto reader = stub.ExportRecords(&ctx, {});
  v1::ExportLine line;
  std::string jsonl;
  while (reader->Read(&line)) {
    std::string json;
    EXPECT_TRUE(google::protobuf::util::MessageToJsonString(line, &json).ok());
    jsonl += json + "\n";
  }
  EXPECT_TRUE(reader->Finish().ok());
  return jsonl;
}

v1::ImportRecordsResponse Import(v1::TuningService::Stub& stub, const std::string& jsonl,
                                 bool trust = false) {
  v1::ImportRecordsRequest request;
  request.set_jsonl(jsonl);
  request.set_trust(trust);
  v1::ImportRecordsResponse response;
  grpc::ClientContext ctx;
  const auto status = stub.ImportRecords(&ctx, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response;
}

std::vector<v1::Record> Records(v1::TuningService::Stub& stub) {
  v1::ListRecordsRequest request;
  request.set_page_size(100);
  v1::ListRecordsResponse response;
  grpc::ClientContext ctx;
  EXPECT_TRUE(stub.ListRecords(&ctx, request, &response).ok());
  return {response.records().begin(), response.records().end()};
}

// One daemon tunes a key to a winner once; its export is what each test
// imports into daemons of its own.
class ImportVerificationFlow : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    std::filesystem::create_directories(dir_->path() / "source");
    source_ = new TiletunedProcess(dir_->path() / "source", {"--host-cpus", "1"});
    source_->Start();
    v1::JobSpec spec;
    spec.set_strategy(v1::STRATEGY_RANDOM);
    spec.set_seed(kDecodeGemmSeed);
    spec.mutable_budget()->set_max_variants(5);
    *spec.add_kernels() = Key();
    auto stub = source_->Stub();
    const v1::Job job = WaitForJob(*stub, SubmitJob(*stub, spec));
    ASSERT_EQ(job.state(), v1::JOB_SUCCEEDED) << job.ShortDebugString();
    *exported_ = Export(*stub);
    const auto hit = Lookup(*stub, Key());
    ASSERT_EQ(hit.result(), v1::LookupResponse::RESULT_HIT) << hit.ShortDebugString();
    *measured_ = hit.record();
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(source_->Stop(SIGTERM), 0);
    delete source_;
    delete dir_;
  }

  // A GEMM tuning wins against the tests' host baseline (a decode GEMV): the verify jobs
  // time it again and must find the win again.
  static v1::KernelKey Key() { return DecodeGemmKey({"bias", "relu"}); }

  // A daemon of its own, in a folder of its own.
  std::unique_ptr<TiletunedProcess> Daemon(const std::string& name,
                                           std::vector<std::string> args = {"--host-cpus", "1"}) {
    std::filesystem::create_directories(dir_->path() / name);
    auto daemon = std::make_unique<TiletunedProcess>(dir_->path() / name, std::move(args));
    daemon->Start();
    return daemon;
  }

  CommandResult Cli(const TiletunedProcess& daemon, std::vector<std::string> args) {
    args.insert(args.begin(), {BinaryPath("tiletune"), "--server", daemon.address()});
    return RunCommand(args);
  }

  static inline TempDir* dir_ = nullptr;
  static inline TiletunedProcess* source_ = nullptr;
  static inline std::string* exported_ = new std::string;
  static inline v1::Record* measured_ = new v1::Record;
};

TEST_F(ImportVerificationFlow, AnImportedRecordIsServedOnlyOnceItsVerifyJobReMeasuredIt) {
  auto daemon = Daemon("verify");
  auto stub = daemon->Stub();
  // The verify job waits behind the blocker.
  const std::string blocker_id = OccupyDevice(*stub);

  const auto imported = Import(*stub, *exported_);
  ASSERT_EQ(imported.rejects_size(), 0) << imported.ShortDebugString();
  ASSERT_EQ(imported.verifications_size(), 1) << imported.ShortDebugString();
  const v1::ImportVerification& verification = imported.verifications(0);
  EXPECT_EQ(verification.device_class(), measured_->device_class());
  EXPECT_EQ(verification.records(), 1);
  ASSERT_FALSE(verification.job_id().empty()) << verification.ShortDebugString();

  const auto before = Lookup(*stub, Key());
  // Read after the lookup: the verify job had not started when it answered.
  ASSERT_EQ(GetJob(*stub, verification.job_id()).state(), v1::JOB_QUEUED)
      << "the blocker ended before the lookup; " << GetJob(*stub, blocker_id).ShortDebugString();
  EXPECT_EQ(before.result(), v1::LookupResponse::RESULT_MISS) << before.ShortDebugString();
  EXPECT_NE(before.fallback().reason().find("imported record of this key is not served"),
            std::string::npos)
      << before.fallback().reason();
  const auto waiting = Records(*stub);
  ASSERT_EQ(waiting.size(), 1u);
  const v1::Provenance& provenance = waiting[0].provenance();
  EXPECT_EQ(provenance.trust(), v1::TRUST_UNVERIFIED);
  EXPECT_TRUE(provenance.has_imported_at());
  EXPECT_EQ(provenance.source_daemon(), measured_->daemon());
  EXPECT_EQ(provenance.source_job_id(), measured_->job_id());
  EXPECT_EQ(provenance.source_speedup(), measured_->speedup());
  EXPECT_NE(provenance.verification().find("verify job"), std::string::npos);
  const auto listed = Cli(*daemon, {"records", "list"});
  EXPECT_NE(listed.out.find("unverified"), std::string::npos) << listed.out;

  CancelJob(*stub, blocker_id);
  const v1::Job verify = WaitForJob(*stub, verification.job_id());
  ASSERT_EQ(verify.state(), v1::JOB_SUCCEEDED) << verify.ShortDebugString();
  // One item, timing the imported kernel alone against the baseline.
  ASSERT_EQ(verify.items_size(), 1);
  EXPECT_EQ(verify.items(0).variants_planned(), 1) << verify.ShortDebugString();
  EXPECT_EQ(verify.items(0).best_params().size(), measured_->config().params().size());

  const auto after = Lookup(*stub, Key());
  ASSERT_EQ(after.result(), v1::LookupResponse::RESULT_HIT) << after.ShortDebugString();
  const v1::Record& served = after.record();
  EXPECT_EQ(served.provenance().trust(), v1::TRUST_VERIFIED);
  EXPECT_EQ(served.provenance().verify_job_id(), verification.job_id());
  EXPECT_EQ(served.provenance().source_daemon(), measured_->daemon());
  // This daemon's numbers: measured by the verify job.
  EXPECT_EQ(served.job_id(), verification.job_id());
  EXPECT_EQ(served.config().kernel_name(), measured_->config().kernel_name());
  EXPECT_EQ(served.config().params_size(), measured_->config().params_size());
  for (const auto& [name, value] : measured_->config().params()) {
    EXPECT_EQ(served.config().params().at(name), value) << name;
  }
  // The export carries the provenance.
  EXPECT_NE(Export(*stub).find("\"trust\":\"TRUST_VERIFIED\""), std::string::npos);
  EXPECT_EQ(daemon->Stop(SIGTERM), 0);
}

// An import of more records than max_kernels_per_job is verified by
// several jobs, none larger, so that other jobs take turns with them.
TEST_F(ImportVerificationFlow, VerifyJobsHoldAtMostMaxKernelsPerJobRecords) {
  // Two more records on the source, three in all.
  auto source = source_->Stub();
  v1::JobSpec spec;
  spec.set_strategy(v1::STRATEGY_RANDOM);
  spec.set_seed(11);
  spec.mutable_budget()->set_max_variants(2);
  *spec.add_kernels() = GemmKey(32, 24, 16);
  *spec.add_kernels() = RowKey("softmax", 16, 96);
  ASSERT_EQ(WaitForJob(*source, SubmitJob(*source, spec)).state(), v1::JOB_SUCCEEDED);
  const std::string three = Export(*source);

  auto daemon = Daemon("capped", {"--host-cpus", "1", "--max-kernels-per-job", "2"});
  auto stub = daemon->Stub();
  const std::string blocker = OccupyDevice(*stub);
  const auto imported = Import(*stub, three);
  ASSERT_EQ(imported.rejects_size(), 0) << imported.ShortDebugString();
  EXPECT_EQ(imported.imported(), 3);
  ASSERT_EQ(imported.verifications_size(), 2) << imported.ShortDebugString();
  std::set<std::string> jobs;
  int records = 0;
  for (const auto& verification : imported.verifications()) {
    EXPECT_EQ(verification.device_class(), measured_->device_class());
    jobs.insert(verification.job_id());
    const v1::Job job = GetJob(*stub, verification.job_id());
    EXPECT_EQ(job.items_size(), verification.records()) << job.ShortDebugString();
    EXPECT_LE(job.items_size(), 2);
    records += job.items_size();
  }
  EXPECT_EQ(jobs.size(), 2u);
  EXPECT_EQ(records, 3);
  CancelJob(*stub, blocker);
  EXPECT_EQ(daemon->Stop(SIGTERM), 0);
}

// A verify job cancelled before it measured leaves its record unserved,
// and the record, `records list` and lookups say so and what to do.
TEST_F(ImportVerificationFlow, ACancelledVerifyJobsRecordSaysSoAndWhatToDo) {
  auto daemon = Daemon("cancelled");
  auto stub = daemon->Stub();
  const std::string blocker = OccupyDevice(*stub);
  const auto imported = Import(*stub, *exported_);
  ASSERT_EQ(imported.verifications_size(), 1) << imported.ShortDebugString();
  const std::string verify_job = imported.verifications(0).job_id();
  ASSERT_FALSE(verify_job.empty());
  const auto cancelled = Cli(*daemon, {"jobs", "cancel", verify_job});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;

  const auto records = Records(*stub);
  ASSERT_EQ(records.size(), 1u);
  const v1::Provenance& provenance = records[0].provenance();
  EXPECT_EQ(provenance.trust(), v1::TRUST_UNVERIFIED);
  EXPECT_EQ(provenance.verify_job_id(), verify_job);
  const std::string said = "verify job " + verify_job + " was cancelled";
  EXPECT_NE(provenance.verification().find(said), std::string::npos) << provenance.verification();
  EXPECT_NE(provenance.verification().find("--replace"), std::string::npos);
  const auto listed = Cli(*daemon, {"records", "list"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("unverified"), std::string::npos) << listed.out;
  EXPECT_NE(listed.err.find("note: 1 imported record not served: " + said), std::string::npos)
      << listed.err;
  const auto miss = Lookup(*stub, Key());
  EXPECT_EQ(miss.result(), v1::LookupResponse::RESULT_MISS);
  EXPECT_NE(miss.fallback().reason().find(said), std::string::npos) << miss.fallback().reason();

  // Importing it again queues another verify job, which serves it.
  CancelJob(*stub, blocker);
  const auto again = [&] {
    v1::ImportRecordsRequest request;
    request.set_jsonl(*exported_);
    request.set_replace(true);
    v1::ImportRecordsResponse response;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub->ImportRecords(&ctx, request, &response).ok());
    return response;
  }();
  ASSERT_EQ(again.verifications_size(), 1) << again.ShortDebugString();
  EXPECT_EQ(WaitForJob(*stub, again.verifications(0).job_id()).state(), v1::JOB_SUCCEEDED);
  EXPECT_EQ(Lookup(*stub, Key()).result(), v1::LookupResponse::RESULT_HIT);
  EXPECT_EQ(daemon->Stop(SIGTERM), 0);
}

TEST_F(ImportVerificationFlow, TrustServesAtOnceAndSaysSo) {
  auto daemon = Daemon("trusted");
  const auto file = dir_->path() / "trusted.jsonl";
  std::ofstream(file) << *exported_;
  const auto imported = Cli(*daemon, {"records", "import", "--trust", file.string()});
  ASSERT_EQ(imported.exit_code, 0) << imported.err << imported.out;
  EXPECT_NE(imported.out.find("imported 1 record (trusted: served now)"), std::string::npos)
      << imported.out;
  auto stub = daemon->Stub();
  const auto hit = Lookup(*stub, Key());
  ASSERT_EQ(hit.result(), v1::LookupResponse::RESULT_HIT) << hit.ShortDebugString();
  EXPECT_EQ(hit.record().provenance().trust(), v1::TRUST_TRUSTED);
  EXPECT_EQ(hit.record().speedup(), measured_->speedup()) << "served as it came";
  v1::ListJobsRequest request;
  v1::ListJobsResponse jobs;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->ListJobs(&ctx, request, &jobs).ok());
  EXPECT_EQ(jobs.jobs_size(), 0) << "nothing to verify";
  const auto listed = Cli(*daemon, {"records", "list"});
  EXPECT_NE(listed.out.find("trusted"), std::string::npos) << listed.out;

  // Verify jobs are the daemon's own: a client cannot pass off a kernel as
  // verified by submitting one.
  v1::SubmitJobRequest forged;
  *forged.mutable_spec()->add_kernels() = Key();
  *forged.mutable_spec()->add_verify() = measured_->config();
  v1::SubmitJobResponse submitted;
  grpc::ClientContext submit_ctx;
  const auto refused = stub->SubmitJob(&submit_ctx, forged, &submitted);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(refused.error_message().rfind("spec.verify:", 0), 0u) << refused.error_message();

  // Without --trust, the CLI says which job verifies them.
  const auto again = Cli(*daemon, {"records", "import", "--replace", file.string()});
  ASSERT_EQ(again.exit_code, 0) << again.err << again.out;
  std::smatch job;
  ASSERT_TRUE(
      std::regex_search(again.out, job, std::regex("unverified until verify job (j-[0-9a-f]+)")))
      << again.out;
  // Ended before the daemon stops: stopping is not what this test is about.
  EXPECT_EQ(WaitForJob(*stub, job[1]).state(), v1::JOB_SUCCEEDED);
  EXPECT_EQ(daemon->Stop(SIGTERM), 0);
}

TEST_F(ImportVerificationFlow, WithoutADeviceOfItsClassARecordStaysUnverified) {
  // Two CPUs: another device class than the source's one.
  auto daemon = Daemon("other-class", {"--host-cpus", "2"});
  auto stub = daemon->Stub();
  const auto imported = Import(*stub, *exported_);
  ASSERT_EQ(imported.rejects_size(), 0) << imported.ShortDebugString();
  ASSERT_EQ(imported.verifications_size(), 1);
  EXPECT_TRUE(imported.verifications(0).job_id().empty());
  EXPECT_NE(
      imported.verifications(0).reason().find("no device of class " + measured_->device_class()),
      std::string::npos)
      << imported.verifications(0).reason();
  const auto miss = Lookup(*stub, Key(), measured_->device_class());
  EXPECT_EQ(miss.result(), v1::LookupResponse::RESULT_MISS) << miss.ShortDebugString();
  EXPECT_NE(miss.fallback().reason().find("no device of class"), std::string::npos)
      << miss.fallback().reason();
  const auto records = Records(*stub);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].provenance().trust(), v1::TRUST_UNVERIFIED);
  EXPECT_NE(records[0].provenance().verification().find("no device of class"), std::string::npos);
  EXPECT_EQ(daemon->Stop(SIGTERM), 0);
}

// Each impossible claim of a line is refused on the real daemon, naming its
// line and field, and nothing of the file is stored.
TEST_F(ImportVerificationFlow, ImpossibleRecordsAreRefusedNamingTheField) {
  auto daemon = Daemon("refuse");
  auto stub = daemon->Stub();
  const nlohmann::json good = nlohmann::json::parse(exported_->substr(0, exported_->find('\n')));
  const auto refused = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json line = good;
    edit(line["record"]);
    const auto response = Import(*stub, good.dump() + "\n" + line.dump() + "\n");
    EXPECT_EQ(response.imported(), 0);
    if (response.rejects_size() != 1) {
      ADD_FAILURE() << response.ShortDebugString();
      return std::string();
    }
    EXPECT_EQ(response.rejects(0).line(), 2);
    return response.rejects(0).field();
  };
  // The second line is the first with another key, so that only its own
  // fault refuses it.
  const auto with_m = [](nlohmann::json& record, int m) {
    for (auto& dim : record["key"]["shape"]) {
      if (dim["name"] == "m") dim["size"] = std::to_string(m);
    }
  };
  EXPECT_EQ(refused([&](nlohmann::json& r) {
              with_m(r, 161);
              r["device"]["vendor"] = "nvidia";
              r["device"]["arch"] = "sm_90";
              r["device"]["name"] = "NVIDIA H200";
              r["device"]["computeUnits"] = 132;
            }),
            "record.device");
  EXPECT_EQ(refused([&](nlohmann::json& r) {
              with_m(r, 161);
              r["config"]["kernelName"] = "host_gemm_imaginary";
              r["config"]["params"]["tile_m"] = "-64";
            }),
            "record.config.kernel_name");
  EXPECT_EQ(refused([&](nlohmann::json& r) {
              with_m(r, 161);
              r["config"]["kernelName"] = "host_gemm_blocked";
              r["config"]["params"]["tile_m"] = "-64";
            }),
            "record.config.params.tile_m");
  EXPECT_EQ(refused([&](nlohmann::json& r) {
              with_m(r, 161);
              r["speedup"] = 1e300;
            }),
            "record.speedup");
  EXPECT_EQ(refused([&](nlohmann::json& r) {
              with_m(r, 161);
              r["maxRelError"] = 5.0;
            }),
            "record.max_rel_error");
  EXPECT_EQ(refused([&](nlohmann::json& r) {
              with_m(r, 161);
              r["tuned"]["medianUs"] = "NaN";
            }),
            "record.tuned.median_us");
  EXPECT_EQ(refused([&](nlohmann::json& r) {
              with_m(r, 161);
              r["baseline"]["medianUs"] = "Infinity";
            }),
            "record.baseline.median_us");
  EXPECT_TRUE(Records(*stub).empty()) << "a refused line imports nothing";

  // The CLI names the file's line and field, and exits 6.
  const auto file = dir_->path() / "impossible.jsonl";
  nlohmann::json bad = good;
  bad["record"]["maxRelError"] = 5.0;
  std::ofstream(file) << bad.dump() << "\n";
  const auto cli = Cli(*daemon, {"records", "import", file.string()});
  EXPECT_EQ(cli.exit_code, 6) << cli.err << cli.out;
  EXPECT_NE(cli.out.find("impossible.jsonl:1: record.max_rel_error: is 5"), std::string::npos)
      << cli.out;
  EXPECT_EQ(daemon->Stop(SIGTERM), 0);
}

}  // namespace
}  // namespace tiletune::testing
