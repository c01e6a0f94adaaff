#include "runtime/gpu_kernel_args.h"

#include <algorithm>

namespace tiletune::runtime {

std::optional<std::string> BindKernelArgs(const KernelArguments& args, tt_kernel_args* raw) {
  if (args.chain_tensors.size() > TT_MAX_CHAIN || args.chain_scalars.size() > TT_MAX_CHAIN) {
    return "a chain of " +
           std::to_string(std::max(args.chain_tensors.size(), args.chain_scalars.size())) +
           " ops exceeds TT_MAX_CHAIN (" + std::to_string(TT_MAX_CHAIN) + ")";
  }
  *raw = tt_kernel_args{};
  raw->a = args.a.ptr;
  raw->b = args.b.ptr;
  raw->out = args.out.ptr;
  raw->prologue_out = args.prologue_out.ptr;
  raw->weight = args.weight.ptr;
  raw->shift = args.shift.ptr;
  for (size_t i = 0; i < args.chain_tensors.size(); ++i) {
    raw->chain_tensors[i] = args.chain_tensors[i].ptr;
  }
  for (size_t i = 0; i < args.chain_scalars.size(); ++i) {
    raw->chain_scalars[i] = static_cast<float>(args.chain_scalars[i]);
  }
  raw->m = args.m;
  raw->n = args.n;
  raw->k = args.k;
  raw->batch = args.batch;
  raw->lda = args.lda;
  raw->ldb = args.ldb;
  raw->ldc = args.ldc;
  raw->eps = static_cast<float>(args.eps);
  return std::nullopt;
}

}  // namespace tiletune::runtime
