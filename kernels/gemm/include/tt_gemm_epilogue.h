// The element-wise pass that follows a vendor library GEMM whose own
// epilogue cannot express the key's chain (the "unfused" sequence a user
// would otherwise run): reads each output value the library wrote, applies
// the whole chain and the output rounding, and writes it back in place.
//
// Config: out_type. Launch: any 1-D grid; threads stride over the
// batch * m * n outputs (dense, ldc = n).
#ifndef TILETUNE_TT_GEMM_EPILOGUE_H
#define TILETUNE_TT_GEMM_EPILOGUE_H

#include "tt_kernel_args.h"
#include "tt_tile.h"

namespace tt::gemm {

template <class C, class Epilogue>
TT_DEVICE void epilogue_pass(const tt_kernel_args& args, const Epilogue& epilogue) {
  using TO = typename C::out_type;
  TO* out = static_cast<TO*>(args.out);
  const long long total = args.batch * args.m * args.ldc;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += stride) {
    out[idx] = arch::convert<TO>::from(epilogue(arch::to_float(out[idx]), idx, idx % args.ldc));
  }
}

}  // namespace tt::gemm

#endif
