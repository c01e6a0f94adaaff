#pragma once

#include <vector>

#include "tuner/worker/problem_inputs.h"

namespace tiletune::tuner {

// The op with its prologue and epilogue chain computed in float64 on the CPU from the same
// f32 inputs the kernel reads: what every backend's output is checked
// against. One value per output element, in the output's (row-major) order.
// Throws std::invalid_argument for an op or chain op it does not know.
std::vector<double> HostReference(const ProblemInputs& problem);

// The second output of a row op whose key has write_prologue_output: its
// input x after the prologue, in float64, laid out like the output.
std::vector<double> HostPrologueReference(const ProblemInputs& problem);

}  // namespace tiletune::tuner
