#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "kernels/core/kernel_template.h"

namespace tiletune::testing {

// tt/kernel_args.h as the GPU templates hand it to the compiler: in memory,
// by its include name.
inline std::pair<std::string, std::string> KernelArgsHeader() {
  std::ifstream in(TILETUNE_SOURCE_DIR "/kernels/tt/kernel_args.h");
  std::stringstream text;
  text << in.rdbuf();
  return {"tt/kernel_args.h", text.str()};
}

// A kernel shaped like the generated ones (one tt_kernel_args by value) that
// reads most fields, so a layout mismatch between host and device shows:
// out[i] = a[i] * chain_scalars[1] + b[i] + eps + ldc, for i < n, and a
// static LDS tile of 256 floats.
inline kernels::KernelSource ArgsProbeSource() {
  kernels::KernelSource s;
  s.kernel_name = "hip_args_probe";
  s.entry = "tt_args_probe";
  s.code =
      "#include \"tt/kernel_args.h\"\n"
      "#include \"probe_config.h\"\n"
      "extern \"C\" __global__ void tt_args_probe(tt_kernel_args args) {\n"
      "  __shared__ float tile[PROBE_TILE];\n"
      "  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
      "  tile[threadIdx.x % PROBE_TILE] = i < args.n ? ((const float*)args.a)[i] : 0.0f;\n"
      "  __syncthreads();\n"
      "  if (i >= args.n) return;\n"
      "  ((float*)args.out)[i] = tile[threadIdx.x % PROBE_TILE] * args.chain_scalars[1] +\n"
      "      ((const float*)args.b)[i] + args.eps + (float)args.ldc;\n"
      "}\n";
  s.headers = {KernelArgsHeader(), {"probe_config.h", "#define PROBE_TILE 256\n"}};
  return s;
}

}  // namespace tiletune::testing
