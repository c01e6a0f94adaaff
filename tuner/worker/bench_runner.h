#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device_executor.h"
#include "tiletune/worker/v1/worker.pb.h"
#include "tuner/worker/device_telemetry.h"
#include "tuner/worker/host_reference.h"
#include "tuner/worker/problem_inputs.h"
#include "tuner/worker/problem_upload.h"

namespace tiletune::tuner {

// Output-sized host bytes kept for a problem's validated runs: each
// output's poison (by output name) and the buffer outputs are read back into.
struct ValidationBuffers {
  std::map<std::string, std::vector<std::byte>> poison;
  std::vector<std::byte> readback;
};

// What the benchmark worker does with one request, on any backend: load the
// artifact (or the vendor library call of a baseline), draw the inputs, check
// one run against the float64 reference (whole, or sampled rows of a large
// problem: the request's ReferencePolicy), then time it per the measurement
// protocol (warm-up, then repetitions with cold caches until both the
// repetition and the time minimums are met; a measurement taken while the
// device throttled is taken again, bounded).
class BenchRunner {
 public:
  worker::v1::BenchResponse Run(const worker::v1::BenchRequest& request,
                                runtime::DeviceExecutor& executor);

 private:
  // The last request's problem: a tuning run times many variants of one key
  // with one seed, so inputs and reference are drawn and computed once.
  struct Problem {
    std::string key;
    uint64_t seed = 0;
    ProblemInputs inputs;
    EncodedInputs encoded;         // of `inputs`, uploaded for every run
    std::string reference_policy;  // serialized: what the references were computed under
    std::optional<Reference> reference;
    // Of the row op's input after the prologue, for keys that write it.
    std::optional<Reference> prologue_reference;
    std::optional<Reference> row_values_reference;  // attention's lse
    ValidationBuffers validation;
  };
  Problem& ProblemFor(const worker::v1::BenchRequest& request);
  DeviceTelemetry& TelemetryFor(const std::string& backend);

  std::optional<Problem> problem_;
  std::map<std::string, std::unique_ptr<DeviceTelemetry>> telemetry_;
};

}  // namespace tiletune::tuner
