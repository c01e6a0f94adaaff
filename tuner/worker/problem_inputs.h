#pragma once

#include <cstdint>
#include <vector>

#include "kernels/core/op_spec.h"
#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::tuner {

// The inputs of one problem, drawn from a seed, as the kernel and the
// reference both see them, named like the fields of the op's launch ABI
// (OpSpec.abi): dense tensors, batch entries one after another.
struct ProblemInputs {
  v1::KernelKey key;  // normalized
  // The op's tensors other than its output, by name (a, b; x, w, b), and
  // the optional inputs the key has (attention's mask), in
  // f32 holding values of the input dtype.
  kernels::NamedTensors tensors;
  // Every integer and float field of the launch ABI: the dims (an optional
  // one at its default size), the dense tensors' leading dimensions and the
  // op's runtime scalars (eps).
  kernels::NamedInts ints;
  kernels::NamedFloats floats;
  // Per prologue op, then per chain op (the kernels' chain argument order);
  // empty where the op has no tensor.
  std::vector<std::vector<float>> chain_tensors;
  std::vector<double> chain_scalars;  // likewise; scale's value
  // The output: `batch` entries of `rows` x `cols` (gemm: m x n), dense.
  int64_t batch = 1, rows = 0, cols = 0;
  int64_t output_elements = 0;

  kernels::ReferenceArgs Reference() const { return {key, tensors, ints, floats}; }
};

// Draws the inputs of `key` from `seed`: uniform in [-1, 1] without values
// near zero (a zero input hides a kernel that ignores it). A `scale` whose
// key value is 0 gets a drawn value, so validation still sees the op.
// Tensors are rounded to the element type the kernel reads them in (the
// input dtype; a chain tensor's own dtype). Large tensors are drawn on up
// to `threads` threads; the inputs depend on the seed alone. Throws
// std::invalid_argument when the key is invalid or uses an element type
// other than f32/f16/bf16.
ProblemInputs MakeProblemInputs(const v1::KernelKey& key, uint64_t seed, int threads = 1);

}  // namespace tiletune::tuner
