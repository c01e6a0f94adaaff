#include "bench/gpu/gemm/variant_timing.h"

#include <stdexcept>

#include "bench/gpu/gemm/device_problem.h"

namespace tiletune::bench {
namespace {

// Seconds NVRTC may take for one variant; the tuner compiled it already, so
// this is normally a hit in the shared compiled-code cache.
constexpr double kCompileSeconds = 120;
// Characters of a compiler log kept for the report.
constexpr size_t kLogChars = 400;

struct VariantFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void Throw(const std::optional<std::string>& error, const std::string& during) {
  if (error) throw VariantFailure(during + ": " + *error);
}

}  // namespace

bool Timed(const TunedVariant& t) {
  return t.timed && t.timed->error.empty();
}

VariantTiming TimeVariant(const TimingSettings& settings, const kernels::KernelTemplate& t,
                          const tuner::ProblemInputs& problem, const tuner::Reference& reference,
                          runtime::DeviceExecutor& executor, runtime::KernelArguments args,
                          const kernels::Variant& variant) {
  VariantTiming result;
  const kernels::KernelSource source = t.Source(problem.key, variant);
  const runtime::CompileResult compiled =
      settings.compiler.Compile(source, settings.arch, runtime::CompileLimits{kCompileSeconds});
  if (!compiled.ok) {
    result.error = std::string("compile ") + (compiled.timed_out ? "timed out" : "failed: ") +
                   compiled.log.substr(0, kLogChars);
    return result;
  }
  try {
    Throw(executor.Load(compiled.artifact_path, source.entry), "load");
    runtime::SetLaunchGeometry(source.launch, executor.compute_units(), args);
    const tuner::OutputCheck check =
        RunAndCheck(executor, args, problem, reference, settings.tolerance,
                    [&] { Throw(executor.Launch(args), "check run"); });
    result.rel_error = check.rel_error;
    if (!check.ok) {
      result.error = "output wrong in this process: " + check.error;
    } else {
      result.timing = Measure(settings.protocol, executor, [&] {
        double seconds = 0;
        Throw(executor.TimedLaunch(args, &seconds), "timed run");
        return seconds;
      });
    }
  } catch (const VariantFailure& e) {
    result.error = e.what();
  }
  executor.Unload();
  return result;
}

}  // namespace tiletune::bench
