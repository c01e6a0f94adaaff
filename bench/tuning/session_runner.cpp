#include "bench/tuning/session_runner.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>

#include "kernels/core/kernel_template.h"
#include "tuner/device_description_of.h"

namespace tiletune::bench {
namespace {

// Keeps the trials of a session; progress and sources are not needed here.
class TrialCollector final : public tuner::TuningObserver {
 public:
  void OnTrial(const v1::Trial& trial) override { trials.push_back(trial); }
  void OnRunFailure(const v1::Trial&) override {}
  void OnKernel(const std::string&, const kernels::KernelSource&) override {}
  void OnProgress(const v1::JobItemProgress&, v1::JobEvent::Kind, const v1::Trial*) override {}
  std::vector<v1::Trial> trials;
};

}  // namespace

std::optional<std::string> ResolveBenchTools(std::string& rtc_binary, std::string& worker_binary,
                                             std::string& cache_dir, std::string_view cache_name) {
  namespace fs = std::filesystem;
  const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
  if (rtc_binary.empty()) rtc_binary = self / "tiletune-rtc";
  if (worker_binary.empty()) worker_binary = self / "tiletune-worker";
  if (cache_dir.empty()) cache_dir = fs::temp_directory_path() / cache_name;
  if (::access(worker_binary.c_str(), X_OK) != 0) {
    return "the tuner's worker " + worker_binary + " is missing or not executable";
  }
  return std::nullopt;
}

kernels::KeySpace TuningSessionRunner::SpaceOf(const v1::KernelKey& key, std::string* why) const {
  return kernels::KeySpace::Of(key, tuner::DeviceDescriptionOf(device_), why);
}

TuningSessionRunner::TuningSessionRunner(runtime::Backend& backend,
                                         const std::string& worker_binary, int compile_threads)
    : backend_(backend),
      device_(backend.Devices().front()),
      worker_({worker_binary, device_.worker_env}),
      pool_(compile_threads) {}

SessionResult TuningSessionRunner::Tune(const v1::KernelKey& key, v1::Strategy strategy,
                                        int max_variants, const tuner::TuningLimits& limits) {
  std::string why;
  const kernels::KeySpace space = SpaceOf(key, &why);
  if (space.empty()) return {.error = why};
  tuner::TuningItem item{.job_id = "bench", .key = key};
  item.spec.set_strategy(strategy);
  item.spec.set_seed(1);
  item.spec.mutable_budget()->set_max_variants(max_variants);
  TrialCollector collector;
  const std::atomic<bool> cancel{false};
  tuner::TuningSession session(space, backend_, device_, worker_, pool_, limits);
  const auto started = std::chrono::steady_clock::now();
  auto outcome = session.Run(item, {}, collector, cancel);
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
          std::move(collector.trials), std::move(outcome.record), outcome.progress.error()};
}

}  // namespace tiletune::bench
