#include "bench_runner.h"

#include <algorithm>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "kernels/core/kernel_key.h"
#include "kernels/core/op_registry.h"
#include "tuner/worker/element_codec.h"
#include "tuner/worker/host_reference.h"
#include "tuner/worker/output_validation.h"
#include "tuner/worker/reference_rows.h"
#include "tuner/worker/timing_summary.h"

namespace tiletune::tuner {
namespace {

using worker::v1::BenchResponse;

// Mixed into the request's seed to draw a sampled reference's rows: fixed
// per problem, yet a stream apart from the inputs drawn from the seed itself.
constexpr uint64_t kSampleSeedMix = 0x5a3d1e0c2b4f6a79;

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

// One output buffer of a validated run and what it must hold. Outputs are
// poisoned first, so unwritten elements show.
struct CheckedOutput {
  std::string name;  // in error messages; empty for the op's output
  runtime::DeviceBuffer buffer;
  v1::DType dtype;
  const Reference& reference;
};

void Validate(runtime::DeviceExecutor& executor, const runtime::KernelArguments& args,
              const std::vector<CheckedOutput>& outputs, double tolerance,
              ValidationBuffers& buffers, BenchResponse* response) {
  if (!(tolerance > 0)) {
    throw RunFailure{BenchResponse::STATUS_RUN_ERROR,
                     "tolerance must be > 0 unless "
                     "skip_validation is set"};
  }
  for (const auto& o : outputs) {
    const auto elements = static_cast<size_t>(o.reference.output_rows * o.reference.row_elements);
    std::vector<std::byte>& poison = buffers.poison[o.name];
    if (poison.size() != elements * ElementBytes(o.dtype)) {
      poison = PoisonElements(elements, o.dtype);
    }
    executor.CopyIn(o.buffer, poison.data(), poison.size());
  }
  Check(executor.Launch(args), "validation run");
  double worst = 0;
  int64_t unwritten = 0, checked = 0, elements = 0;
  for (const auto& o : outputs) {
    const int64_t size = o.reference.output_rows * o.reference.row_elements;
    const size_t bytes = static_cast<size_t>(size) * ElementBytes(o.dtype);
    // Grown once per problem; every byte checked is copied out first.
    if (buffers.readback.size() < bytes) buffers.readback.resize(bytes);
    executor.CopyOut(buffers.readback.data(), o.buffer, bytes);
    const OutputCheck check =
        CheckOutput(std::span(buffers.readback).first(bytes), o.dtype, o.reference, tolerance);
    worst = std::max(worst, check.rel_error);
    unwritten += check.unwritten;
    checked += check.checked;
    elements += size;
    response->set_rel_error(worst);
    response->set_unwritten_elements(unwritten);
    response->mutable_validation()->set_checked_elements(checked);
    response->mutable_validation()->set_output_elements(elements);
    if (!check.ok) {
      throw RunFailure{BenchResponse::STATUS_WRONG_RESULT,
                       o.name.empty() ? check.error : o.name + ": " + check.error};
    }
  }
}

std::vector<double> TimeRepetitions(runtime::DeviceExecutor& executor,
                                    const runtime::KernelArguments& args,
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
  return times;
}

// A measurement during which the device slowed itself down is thrown away
// and taken again, up to the protocol's bound; the last one is kept, marked.
v1::Timing Measure(runtime::DeviceExecutor& executor, const runtime::KernelArguments& args,
                   const worker::v1::MeasurementProtocol& protocol, DeviceTelemetry& telemetry) {
  for (int discards = 0;; ++discards) {
    const v1::DeviceState before = telemetry.Sample();
    v1::Timing timing = SummarizeTimes(TimeRepetitions(executor, args, protocol));
    *timing.mutable_device_state() = MergeDeviceStates(before, telemetry.Sample());
    timing.set_throttled_discards(discards);
    if (!IsThrottled(timing.device_state()) || discards >= protocol.max_throttle_retries()) {
      return timing;
    }
  }
}

runtime::VendorCall VendorCallOf(const worker::v1::BenchRequest& request) {
  const worker::v1::VendorAlgorithmChoice& choice = request.vendor_algorithm();
  runtime::VendorCall call{.library = request.vendor_baseline(),
                           .key = request.key(),
                           .pass_artifact_path = request.artifact_path(),
                           .pass_entry = request.entry(),
                           .heuristic_requested = choice.heuristic_requested(),
                           .heuristic_index = choice.heuristic_index()};
  if (!choice.chosen().algo().empty()) call.chosen = choice.chosen();
  return call;
}

}  // namespace

BenchRunner::Problem& BenchRunner::ProblemFor(const worker::v1::BenchRequest& request) {
  const std::string key = kernels::CanonicalKeyString(request.key());
  // Scale values are runtime arguments outside the canonical key, yet the
  // inputs depend on them.
  std::string scalars;
  for (const auto& op : kernels::ChainArgumentOps(request.key())) {
    scalars += std::to_string(op.scalar()) + ",";
  }
  if (!problem_ || problem_->key != key + scalars || problem_->seed != request.seed()) {
    problem_.reset();
    ProblemInputs inputs =
        MakeProblemInputs(request.key(), request.seed(), ReferenceThreads(request.reference()));
    EncodedInputs encoded = EncodeInputs(inputs);
    problem_ = Problem{key + scalars, request.seed(), std::move(inputs), std::move(encoded), "",
                       std::nullopt};
  }
  return *problem_;
}

DeviceTelemetry& BenchRunner::TelemetryFor(const std::string& backend) {
  auto& telemetry = telemetry_[backend];
  if (!telemetry) {
    std::string why;
    telemetry = OpenDeviceTelemetry(backend, &why);
    if (!why.empty()) spdlog::warn("device state of {} measurements is unknown: {}", backend, why);
  }
  return *telemetry;
}

BenchResponse BenchRunner::Run(const worker::v1::BenchRequest& request,
                               runtime::DeviceExecutor& executor) {
  BenchResponse response;
  ExecutorScope scope{executor};
  const auto error = request.vendor_baseline().empty()
                         ? executor.Load(request.artifact_path(), request.entry())
                         : executor.LoadVendor(VendorCallOf(request));
  if (error) {
    response.set_status(BenchResponse::STATUS_LOAD_ERROR);
    response.set_error(*error);
    return response;
  }
  try {
    Problem& problem = ProblemFor(request);
    runtime::KernelArguments args = UploadProblem(executor, problem.inputs, problem.encoded);
    runtime::SetLaunchGeometry(request.launch(), executor.compute_units(), args);
    if (!request.skip_validation()) {
      const v1::KernelKey& key = problem.inputs.key;
      const std::string policy = request.reference().SerializeAsString();
      if (!problem.reference || problem.reference_policy != policy) {
        problem.reference.reset();  // freed before the next one is computed
        problem.prologue_reference.reset();
        problem.row_values_reference.reset();
        std::vector<int64_t> rows =
            ReferenceRows(problem.inputs, request.reference(), request.seed() ^ kSampleSeedMix);
        const int threads = ReferenceThreads(request.reference());
        if (key.write_prologue_output()) {
          problem.prologue_reference = HostPrologueReference(problem.inputs, rows, threads);
        }
        problem.row_values_reference = HostRowValuesReference(problem.inputs, rows, threads);
        problem.reference = HostReference(problem.inputs, std::move(rows), threads);
        problem.reference_policy = policy;
      }
      const std::string output(kernels::OutputTensor(*args.op).name);
      std::vector<CheckedOutput> outputs = {
          {"", args.tensors.at(output), key.output_dtype(), *problem.reference}};
      if (key.write_prologue_output()) {
        outputs.push_back({"prologue output",
                           args.tensors.at(std::string(kernels::kPrologueOutputField)),
                           key.input_dtype(), *problem.prologue_reference});
      }
      if (problem.row_values_reference) {
        const std::string field(args.op->row_values->field);
        outputs.push_back(
            {field, args.tensors.at(field), v1::DTYPE_F32, *problem.row_values_reference});
      }
      Validate(executor, args, outputs, request.tolerance(), problem.validation, &response);
    }
    *response.mutable_timing() =
        Measure(executor, args, request.protocol(), TelemetryFor(request.backend()));
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
  // Before the scope unloads the call.
  if (auto algorithm = executor.VendorAlgorithmRun()) {
    *response.mutable_vendor_algorithm() = std::move(*algorithm);
  }
  return response;
}

}  // namespace tiletune::tuner
