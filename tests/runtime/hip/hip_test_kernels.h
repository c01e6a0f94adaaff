#pragma once

#include <string>

#include "kernels/core/kernel_template.h"
#include "kernels/source/device_headers.h"

namespace tiletune::testing {

// A kernel shaped like the generated ones (one launch ABI struct by value,
// rmsnorm's) that reads most kinds of field, so a layout mismatch between
// host and device shows: y[i] = x[i] * chain.scalars[1] + w[i] + eps + ldy,
// for i < cols, and a static LDS tile of 256 floats.
inline kernels::KernelSource ArgsProbeSource() {
  kernels::KernelSource s;
  s.kernel_name = "hip_args_probe";
  s.entry = "tt_args_probe";
  s.code =
      "#include \"ops/rmsnorm/rmsnorm_args.h\"\n"
      "#include \"probe_config.h\"\n"
      "extern \"C\" __global__ void tt_args_probe(tt_rmsnorm_args args) {\n"
      "  __shared__ float tile[PROBE_TILE];\n"
      "  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
      "  tile[threadIdx.x % PROBE_TILE] = i < args.cols ? ((const float*)args.x)[i] : 0.0f;\n"
      "  __syncthreads();\n"
      "  if (i >= args.cols) return;\n"
      "  ((float*)args.y)[i] = tile[threadIdx.x % PROBE_TILE] * args.chain.scalars[1] +\n"
      "      ((const float*)args.w)[i] + args.eps + (float)args.ldy;\n"
      "}\n";
  s.headers = kernels::DeviceHeaders();
  s.headers.emplace_back("probe_config.h", "#define PROBE_TILE 256\n");
  return s;
}

}  // namespace tiletune::testing
