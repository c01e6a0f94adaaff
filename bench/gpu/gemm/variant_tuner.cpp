#include "bench/gpu/gemm/variant_tuner.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/gpu/gemm/device_problem.h"

namespace tiletune::bench {
namespace {

struct Candidate {
  kernels::Variant variant;
  kernels::KernelSource source;
  runtime::CompileResult compiled;
  std::optional<v1::Timing> timing;
  double rel_error = 0;
};

void CompileAll(const TunerSettings& settings, std::vector<Candidate>& candidates) {
  std::atomic<size_t> next{0};
  std::vector<std::jthread> pool;
  const runtime::CompileLimits limits{120};
  for (int i = 0; i < std::max(1, settings.threads); ++i) {
    pool.emplace_back([&] {
      for (size_t j; (j = next++) < candidates.size();) {
        candidates[j].compiled =
            settings.compiler.Compile(candidates[j].source, settings.arch, limits);
      }
    });
  }
}

// A load or launch error of one variant: it is skipped, the search goes on.
struct VariantFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void Throw(const std::optional<std::string>& error, const std::string& during) {
  if (error) throw VariantFailure(during + ": " + *error);
}

}  // namespace

TunedVariant TuneVariants(const TunerSettings& settings, const kernels::KernelTemplate& tile_gemm,
                          const tuner::ProblemInputs& problem, const tuner::Reference& reference,
                          runtime::DeviceExecutor& executor, runtime::KernelArguments args,
                          bool check_every) {
  TunedVariant result;
  std::vector<Candidate> candidates;
  for (auto& variant : tile_gemm.Space(problem.key).ValidVariants()) {
    kernels::KernelSource source = tile_gemm.Source(problem.key, variant);
    candidates.push_back({std::move(variant), std::move(source), {}, std::nullopt, 0});
  }
  result.variants = static_cast<int>(candidates.size());
  CompileAll(settings, candidates);

  auto fail = [&](int& counter, const std::string& why) {
    ++counter;
    if (result.first_failure.empty()) result.first_failure = why;
  };
  // Loads a candidate and points `args` at its launch geometry.
  auto load = [&](const Candidate& c) {
    Throw(executor.Load(c.compiled.artifact_path, c.source.entry), "load");
    runtime::SetLaunchGeometry(c.source.launch, executor.compute_units(), args);
  };
  auto check = [&](Candidate& c) {
    const tuner::OutputCheck out =
        RunAndCheck(executor, args, problem, reference, settings.tolerance,
                    [&] { Throw(executor.Launch(args), "check run"); });
    c.rel_error = out.rel_error;
    if (!out.ok) fail(result.wrong, kernels::VariantString(c.variant) + ": " + out.error);
    return out.ok;
  };

  for (Candidate& c : candidates) {
    const std::string name = kernels::VariantString(c.variant);
    if (!c.compiled.ok) {
      fail(result.compile_failed, name + ": compile " +
                                      (c.compiled.timed_out ? "timed out" : "failed: ") +
                                      c.compiled.log.substr(0, 400));
      continue;
    }
    try {
      load(c);
      if (check_every && !check(c)) continue;
      c.timing = Measure(settings.protocol, executor, [&] {
        double seconds = 0;
        Throw(executor.TimedLaunch(args, &seconds), "timed run");
        return seconds;
      });
    } catch (const VariantFailure& e) {
      fail(result.run_failed, name + ": " + e.what());
    }
  }

  std::vector<Candidate*> timed;
  for (Candidate& c : candidates) {
    if (c.timing) timed.push_back(&c);
  }
  std::ranges::sort(timed, {}, [](const Candidate* c) { return c->timing->median_us(); });
  for (Candidate* c : timed) {
    if (!check_every) {
      try {
        load(*c);
        if (!check(*c)) continue;
      } catch (const VariantFailure& e) {
        fail(result.run_failed, kernels::VariantString(c->variant) + ": " + e.what());
        continue;
      }
    }
    result.variant = kernels::VariantString(c->variant);
    result.timing = *c->timing;
    result.rel_error = c->rel_error;
    break;
  }
  executor.Unload();
  return result;
}

}  // namespace tiletune::bench
