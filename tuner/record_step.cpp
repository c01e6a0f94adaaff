#include "tuner/record_step.h"

#include <unistd.h>

#include <google/protobuf/util/time_util.h>

#include "tuner/roofline.h"

namespace tiletune::tuner {
namespace {

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

}  // namespace

v1::Record RecordOf(const TuningItem& item, const runtime::DeviceInfo& device,
                    const TimedBaseline& baseline, const Verdict& verdict) {
  v1::Record record;
  *record.mutable_key() = item.key;
  record.set_device_class(device.fingerprint.device_class());
  *record.mutable_device() = device.fingerprint;
  *record.mutable_toolchain() = device.toolchain;
  *record.mutable_baseline() = verdict.baseline;
  record.set_baseline_name(baseline.baseline.name);
  if (baseline.algorithm) *record.mutable_baseline_algorithm() = *baseline.algorithm;
  record.mutable_baseline_candidates()->Add(baseline.candidates.begin(), baseline.candidates.end());
  *record.mutable_measured_at() = google::protobuf::util::TimeUtil::GetCurrentTime();
  record.set_job_id(item.job_id);
  record.set_daemon(HostName());
  *record.mutable_decision() = verdict.decision;
  if (verdict.fastest) {
    const v1::Trial& trial = verdict.fastest->trial;
    auto* config = record.mutable_config();
    config->set_kernel_name(trial.kernel_name());
    config->set_source_hash(trial.source_hash());
    config->mutable_params()->insert(trial.params().begin(), trial.params().end());
    *config->mutable_launch() = verdict.fastest->launch;
    *record.mutable_tuned() = verdict.fastest->timing;
    record.set_max_rel_error(trial.rel_error());
    *record.mutable_validation() = trial.validation();
    record.set_speedup(verdict.baseline.median_us() / record.tuned().median_us());
    *record.mutable_roofline() =
        RooflineOf(item.key, device.fingerprint, record.tuned().median_us());
  }
  record.set_winner(verdict.tuned ? v1::WINNER_TUNED : v1::WINNER_VENDOR);
  return record;
}

}  // namespace tiletune::tuner
