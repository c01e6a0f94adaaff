#include "bench_runner.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/kernel_key.h"
#include "tuner/worker/host_reference.h"
#include "tuner/worker/output_validation.h"
#include "tuner/worker/timing_summary.h"

namespace tiletune::tuner {
namespace {

using worker::v1::BenchResponse;

// Raised inside a run to answer with a status and a message.
struct RunFailure {
  BenchResponse::Status status;
  std::string message;
};

void Check(const std::optional<std::string>& error, const char* during) {
  if (error) throw RunFailure{BenchResponse::STATUS_RUN_ERROR, std::string(during) + ": " + *error};
}

// Frees the request's buffers and unloads its kernel however the run ends.
struct ExecutorScope {
  runtime::DeviceExecutor& executor;
  ~ExecutorScope() {
    executor.Unload();
    executor.ReleaseAll();
  }
};

runtime::DeviceBuffer Upload(runtime::DeviceExecutor& executor, const std::vector<float>& data) {
  if (data.empty()) return {};
  const size_t bytes = data.size() * sizeof(float);
  runtime::DeviceBuffer buffer = executor.Allocate(bytes);
  executor.CopyIn(buffer, data.data(), bytes);
  return buffer;
}

runtime::KernelArguments UploadArguments(runtime::DeviceExecutor& executor,
                                         const ProblemInputs& p) {
  runtime::KernelArguments args;
  args.a = Upload(executor, p.a);
  args.b = Upload(executor, p.b);
  args.weight = Upload(executor, p.weight);
  args.shift = Upload(executor, p.shift);
  for (const auto& t : p.chain_tensors) args.chain_tensors.push_back(Upload(executor, t));
  args.chain_scalars = p.chain_scalars;
  args.out = executor.Allocate(static_cast<size_t>(p.output_elements) * sizeof(float));
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.batch = p.batch;
  args.lda = p.lda;
  args.ldb = p.ldb;
  args.ldc = p.ldc;
  args.eps = p.eps;
  return args;
}

// One validated run: outputs poisoned first, so unwritten elements show.
void Validate(runtime::DeviceExecutor& executor, const runtime::KernelArguments& args,
              const std::vector<double>& reference, double tolerance, BenchResponse* response) {
  if (!(tolerance > 0)) {
    throw RunFailure{BenchResponse::STATUS_RUN_ERROR,
                     "tolerance must be > 0 unless "
                     "skip_validation is set"};
  }
  std::vector<float> out(reference.size(), PoisonValue());
  executor.CopyIn(args.out, out.data(), out.size() * sizeof(float));
  Check(executor.Launch(args), "validation run");
  executor.CopyOut(out.data(), args.out, out.size() * sizeof(float));
  const OutputCheck check = CheckOutput(out, reference, tolerance);
  response->set_rel_error(check.rel_error);
  response->set_unwritten_elements(check.unwritten);
  if (!check.ok) throw RunFailure{BenchResponse::STATUS_WRONG_RESULT, check.error};
}

v1::Timing Measure(runtime::DeviceExecutor& executor, const runtime::KernelArguments& args,
                   const worker::v1::MeasurementProtocol& protocol) {
  for (int i = 0; i < protocol.warmup(); ++i) Check(executor.Launch(args), "warm-up run");
  // At least one repetition; the cap never undercuts the minimum.
  const int min_reps = std::max(1, protocol.min_repetitions());
  const int max_reps = std::max(min_reps, protocol.max_repetitions());
  std::vector<double> times;
  double total = 0;
  while (static_cast<int>(times.size()) < max_reps &&
         (static_cast<int>(times.size()) < min_reps || total < protocol.min_seconds())) {
    executor.FlushCaches();
    double seconds = 0;
    Check(executor.TimedLaunch(args, &seconds), "timed run");
    times.push_back(seconds);
    total += seconds;
  }
  return SummarizeTimes(std::move(times));
}

}  // namespace

BenchRunner::Problem& BenchRunner::ProblemFor(const worker::v1::BenchRequest& request) {
  const std::string key = kernels::CanonicalKeyString(request.key());
  // Scale values are runtime arguments outside the canonical key, yet the
  // inputs depend on them.
  std::string scalars;
  for (const auto& op : request.key().chain()) scalars += std::to_string(op.scalar()) + ",";
  if (!problem_ || problem_->key != key + scalars || problem_->seed != request.seed()) {
    problem_.reset();
    problem_ = Problem{key + scalars, request.seed(),
                       MakeProblemInputs(request.key(), request.seed()), std::nullopt};
  }
  return *problem_;
}

BenchResponse BenchRunner::Run(const worker::v1::BenchRequest& request,
                               runtime::DeviceExecutor& executor) {
  BenchResponse response;
  ExecutorScope scope{executor};
  if (const auto error = executor.Load(request.artifact_path(), request.entry())) {
    response.set_status(BenchResponse::STATUS_LOAD_ERROR);
    response.set_error(*error);
    return response;
  }
  try {
    Problem& problem = ProblemFor(request);
    const runtime::KernelArguments args = UploadArguments(executor, problem.inputs);
    if (!request.skip_validation()) {
      if (!problem.reference) problem.reference = HostReference(problem.inputs);
      Validate(executor, args, *problem.reference, request.tolerance(), &response);
    }
    *response.mutable_timing() = Measure(executor, args, request.protocol());
    response.set_status(BenchResponse::STATUS_OK);
  } catch (const RunFailure& failure) {
    response.set_status(failure.status);
    response.set_error(failure.message);
  } catch (const std::bad_alloc&) {
    response.set_status(BenchResponse::STATUS_RUN_ERROR);
    response.set_error("out of memory for the inputs of " +
                       kernels::CanonicalKeyString(request.key()));
  } catch (const std::exception& e) {
    response.set_status(BenchResponse::STATUS_RUN_ERROR);
    response.set_error(e.what());
  }
  return response;
}

}  // namespace tiletune::tuner
