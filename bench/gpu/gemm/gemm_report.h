#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/gpu/gemm/gemm_shapes.h"
#include "bench/gpu/gemm/variant_timing.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::bench {

// One cuBLASLt contender, measured like tiletune's variants.
struct VendorResult {
  std::string algorithm;
  v1::Timing timing;
  double rel_error = 0;
  std::string wrong;  // why its output failed the check; empty when it passed
};

// One line of the comparison. `vendor` is cuBLASLt with its own epilogue
// (GELU_BIAS for bias+gelu_tanh), absent where that cannot compute the
// chain; `unfused`, for any chain, its plain GEMM followed by the epilogue
// pass (what a framework does without a fused epilogue).
struct ComparisonRow {
  GemmShape shape;
  Epilogue epilogue = Epilogue::kPlain;
  TunedVariant tiletune;
  std::optional<VendorResult> vendor, unfused;
  std::string error;  // why the row is incomplete; empty when it is not
};

// The table on `out`: shape, epilogue, tiletune and cuBLASLt µs and TFLOP/s,
// ratio = cuBLASLt time / tiletune time (> 1: tiletune is faster), relative
// errors, what the daemon would serve (tuned or vendor) and the variant
// timed; then each row's failures and, where the daemon would serve the
// vendor baseline, which one and why.
void PrintTable(const std::vector<ComparisonRow>& rows, std::ostream& out);

// Every row with its numbers; `device` describes the GPU and the libraries.
nlohmann::json ReportJson(const std::vector<ComparisonRow>& rows, const nlohmann::json& device);

}  // namespace tiletune::bench
