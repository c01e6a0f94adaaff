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

// One cuBLASLt contender (an algorithm, with cuBLASLt's own epilogue or
// followed by our epilogue pass), measured like tiletune's variants.
struct VendorResult {
  v1::VendorAlgorithm algorithm;  // its description names it
  v1::Timing timing;
  double rel_error = 0;
  std::string wrong;  // why it failed (planning, or the output check); empty when it passed
};

// One line of the comparison. `candidates`: every cuBLASLt contender, in
// the tuner's baseline order; `heuristic0` the first of them (heuristic #0
// with cuBLASLt's own epilogue where it computes the chain, else with the
// pass: the baseline before best-of-N); `best` the fastest correct one (the
// best-of-N baseline the tuner keeps).
struct ComparisonRow {
  GemmShape shape;
  Epilogue epilogue = Epilogue::kPlain;
  TunedVariant tiletune;
  std::vector<VendorResult> candidates;
  std::optional<VendorResult> heuristic0, best;
  std::string error;  // why the row is incomplete; empty when it is not
};

// The fastest correct of `candidates`; nullopt when none passed.
std::optional<VendorResult> FastestVendor(const std::vector<VendorResult>& candidates);

// The table on `out`: shape, epilogue, tiletune µs and TFLOP/s, cuBLASLt
// heuristic #0 and the best-of-N baseline µs, each with ratio = its time /
// tiletune time (> 1: tiletune is faster), the best algorithm in short,
// tiletune's relative error, what the daemon would serve (tuned or vendor)
// and the variant timed; then per row the best algorithm in full, the
// failures and, where the daemon would serve the vendor baseline, which
// one and why.
void PrintTable(const std::vector<ComparisonRow>& rows, std::ostream& out);

// Every row with its numbers; `device` describes the GPU and the libraries.
nlohmann::json ReportJson(const std::vector<ComparisonRow>& rows, const nlohmann::json& device);

}  // namespace tiletune::bench
