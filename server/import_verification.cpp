#include "server/import_verification.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include <google/protobuf/util/message_differencer.h>
#include <google/protobuf/util/time_util.h>
#include <spdlog/spdlog.h>

#include "kernels/core/kernel_key.h"
#include "server/job_creation.h"

namespace tiletune::server {
namespace {

// Spec name of the verify jobs.
constexpr const char* kVerifyImportJob = "verify-import";

std::string NoDeviceToVerify(const std::string& device_class) {
  return "no device of class " + device_class +
         " on this daemon: unverified, not served; import it on a daemon that has one, or with "
         "trust";
}

// Whether `stored` is still the unverified import of `config`: what a
// verify job of it may settle.
bool IsUnverifiedImportOf(const std::optional<v1::Record>& stored, const v1::TunedConfig& config) {
  return stored && stored->provenance().trust() == v1::TRUST_UNVERIFIED &&
         google::protobuf::util::MessageDifferencer::Equals(stored->config(), config);
}

std::string Speedup(double speedup) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2fx", speedup);
  return text;
}

}  // namespace

void MarkImported(std::vector<db::ImportedRecord>& records, bool trust,
                  const std::string& imported_by, const DeviceRegistry& devices) {
  const auto now = google::protobuf::util::TimeUtil::GetCurrentTime();
  for (auto& imported : records) {
    v1::Record& record = imported.record;
    // What the line says of its own provenance is the exporter's, not ours.
    v1::Provenance provenance;
    provenance.set_trust(trust ? v1::TRUST_TRUSTED : v1::TRUST_UNVERIFIED);
    *provenance.mutable_imported_at() = now;
    provenance.set_imported_by(imported_by);
    provenance.set_source_daemon(record.daemon());
    provenance.set_source_job_id(record.job_id());
    if (record.has_measured_at()) *provenance.mutable_source_measured_at() = record.measured_at();
    provenance.set_source_speedup(record.speedup());
    if (trust) {
      provenance.set_verification("imported with trust: served as it came");
    } else if (devices.FindByClass(record.device_class())) {
      provenance.set_verification("waits for the verify job its import queued");
    } else {
      provenance.set_verification(NoDeviceToVerify(record.device_class()));
    }
    *record.mutable_provenance() = std::move(provenance);
  }
}

std::vector<v1::ImportVerification> QueueImportVerification(
    ServiceContext& context, const std::vector<db::ImportedRecord>& records) {
  std::map<std::string, std::vector<const db::ImportedRecord*>> by_class;
  for (const auto& r : records) by_class[r.record.device_class()].push_back(&r);
  std::vector<v1::ImportVerification> answers;
  const size_t per_job = static_cast<size_t>(context.config.max_kernels_per_job);
  for (const auto& [device_class, of_class] : by_class) {
    const ManagedDevice* device = context.devices.FindByClass(device_class);
    if (!device) {
      v1::ImportVerification& answer = answers.emplace_back();
      answer.set_device_class(device_class);
      answer.set_records(static_cast<int>(of_class.size()));
      answer.set_reason(NoDeviceToVerify(device_class));
      continue;
    }
    for (size_t first = 0; first < of_class.size(); first += per_job) {
      const size_t end = std::min(of_class.size(), first + per_job);
      v1::JobSpec spec;
      spec.set_name(kVerifyImportJob);
      spec.mutable_budget()->set_max_variants(1);
      spec.mutable_device()->set_device(device->info.id);
      for (size_t i = first; i < end; ++i) {
        *spec.add_kernels() = of_class[i]->record.key();
        *spec.add_verify() = of_class[i]->record.config();
      }
      const db::JobAdmissionResult created =
          CreateJob(context, std::move(spec), device->queue, JobRequester{}, {});
      v1::ImportVerification& answer = answers.emplace_back();
      answer.set_device_class(device_class);
      answer.set_records(static_cast<int>(end - first));
      answer.set_job_id(created.job_id);
      spdlog::info("job={}: verifies {} imported record(s) of class {} on {}", created.job_id,
                   end - first, device_class, device->info.id);
    }
  }
  return answers;
}

void MarkVerificationCancelled(ServiceContext& context, const v1::Job& job) {
  if (job.spec().verify_size() == 0) return;
  // The queue is a device here (one node) or the class (fleet mode).
  const ManagedDevice* device = context.devices.Find(job.device());
  const std::string device_class = device ? device->info.fingerprint.device_class() : job.device();
  for (const auto& item : job.items()) {
    const v1::TunedConfig* config = VerifiedConfig(job.spec(), item.index());
    if (item.state() != v1::JOB_CANCELLED || !config) continue;
    const std::string canonical = kernels::CanonicalKeyString(item.key());
    std::optional<v1::Record> stored = context.store->FindRecord(canonical, device_class);
    if (!IsUnverifiedImportOf(stored, *config)) continue;
    stored->mutable_provenance()->set_verify_job_id(job.id());
    stored->mutable_provenance()->set_verification(
        "verify job " + job.id() +
        " was cancelled: not served; import the record again (--replace) to queue another, or "
        "with --trust to serve it as it came");
    context.store->PutRecord(canonical, *stored);
    context.cache.Erase(device_class, canonical);
  }
}

const v1::TunedConfig* VerifiedConfig(const v1::JobSpec& spec, int item_index) {
  if (item_index < 0 || item_index >= spec.verify_size()) return nullptr;
  return &spec.verify(item_index);
}

std::optional<v1::Record> SettledImport(const std::optional<v1::Record>& stored,
                                        const v1::TunedConfig& config, const std::string& job_id,
                                        const std::optional<v1::Record>& measured,
                                        const std::string& error) {
  if (!IsUnverifiedImportOf(stored, config)) return std::nullopt;
  v1::Provenance provenance = stored->provenance();
  provenance.set_verify_job_id(job_id);
  if (!measured) {
    v1::Record failed = *stored;
    provenance.set_trust(v1::TRUST_VERIFY_FAILED);
    provenance.set_verification("verify job " + job_id + " measured nothing: " + error);
    *failed.mutable_provenance() = std::move(provenance);
    return failed;
  }
  v1::Record verified = *measured;
  provenance.set_trust(v1::TRUST_VERIFIED);
  if (measured->winner() == v1::WINNER_TUNED) {
    provenance.set_verification("re-measured by verify job " + job_id + ": " +
                                config.kernel_name() + " is " + Speedup(measured->speedup()) +
                                " the speed of " + measured->baseline_name() + " here (" +
                                Speedup(provenance.source_speedup()) + " where it was measured)");
  } else {
    provenance.set_verification("re-measured by verify job " + job_id + ": " +
                                config.kernel_name() + " did not beat " +
                                measured->baseline_name() +
                                " here, or failed (see the job's trials): the record says VENDOR");
  }
  *verified.mutable_provenance() = std::move(provenance);
  return verified;
}

bool Servable(const v1::Record& record) {
  const v1::Trust trust = record.provenance().trust();
  return trust != v1::TRUST_UNVERIFIED && trust != v1::TRUST_VERIFY_FAILED;
}

}  // namespace tiletune::server
