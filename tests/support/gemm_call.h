#pragma once

#include "kernels/core/op_registry.h"
#include "runtime/device_executor.h"

namespace tiletune::testing {

// The arguments of a call through gemm's launch ABI (tt_gemm_args) with
// tensors a, b and c as given and every integer field 0 until a test sets
// it: what hand-written test kernels taking tt_gemm_args are launched with.
inline runtime::KernelArguments GemmCall(runtime::DeviceBuffer a, runtime::DeviceBuffer b,
                                         runtime::DeviceBuffer c) {
  runtime::KernelArguments args;
  args.op = &kernels::OpSpecOf("gemm");
  args.tensors = {{"a", a}, {"b", b}, {"c", c}};
  for (const char* field : {"m", "n", "k", "batch", "lda", "ldb", "ldc"}) args.ints[field] = 0;
  return args;
}

}  // namespace tiletune::testing
