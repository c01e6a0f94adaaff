#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "tiletune/v1/jobs.pb.h"

namespace tiletune::client {

// Job spec files, YAML or JSON (yaml-cpp reads both; docs/job-files.md is
// the users' page):
//
//   name: example            # optional
//   strategy: random         # exhaustive | random (default: the daemon's)
//   priority: 0              # higher runs first
//   device: cpu:0            # optional; or device_class: <class id>
//   seed: 7                  # optional, random strategy only
//   budget: {max_variants: 12, max_seconds: 60}
//   kernels:                 # at least one
//     - op: gemm
//       dtype: f32           # shorthand for input_dtype; also input_dtype,
//                            # output_dtype, accumulate_dtype (f32 f16 bf16 f64)
//       allow_tf32: true     # f32 gemm only: products may round inputs to tf32
//       layouts: {a: row, b: col}
//       shape: {m: 128, n: 256, k: 64}
//       chain: [bias, gelu_tanh, {op: scale, scalar: 0.5}, residual_add,
//               {op: cast, dtype: bf16}]   # "scale=0.5" and "cast=bf16" work too
//     - op: rmsnorm                 # a row op with a prologue, also writing
//       shape: {rows: 16, cols: 4096}  # x + residual (the residual stream)
//       prologue: [residual_add]
//       write_prologue_output: true
//     - shape: {t: 16384, d: 4096}   # an op graph (KernelKey.ops): no op/chain/dtype
//       tensors: {x: {dims: [t, d], dtype: bf16}, res: {dims: [t, d], dtype: bf16},
//                 w: {dims: [d], dtype: bf16}}
//       ops:
//         - {op: add, inputs: [x, res], output: h}
//         - {op: rmsnorm, inputs: [h, w], output: y}
//         - {op: cast, inputs: [y], output: out, dtype: f16}
//       outputs: [out]                # optional; default: the last op's output
//
// A file may also hold a JobSpec in the API's JSON form, as `tiletune --json
// jobs show ID` prints it under "spec" (enum names such as STRATEGY_RANDOM,
// shape as [{name, size}]): a job resubmits as it was stored.
//
// Unknown and repeated keys are errors: a typo must not silently do nothing.
// Errors are InputError("<source>: <field path>: <problem> (line N)"), e.g.
// "job.yaml: kernels[0].shape.m: expected an integer, got '12x' (line 9)".
// Only the syntax is checked; the daemon validates the kernel keys.

// Reads and parses the file at `path` (also the source name in errors).
v1::JobSpec ReadJobSpecFile(const std::filesystem::path& path);

// Parses spec text; `source` names it in error messages.
v1::JobSpec ParseJobSpec(std::string_view text, const std::string& source);

// One kernel key in the form of a `kernels` entry above (`tiletune lookup
// --key-file`), from text or a file.
v1::KernelKey ParseKernelKeyText(std::string_view text, const std::string& source);
v1::KernelKey ReadKernelKeyFile(const std::filesystem::path& path);

}  // namespace tiletune::client
