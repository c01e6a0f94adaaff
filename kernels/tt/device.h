// The vendor differences a GPU kernel sees, so that one source compiles
// with NVRTC (CUDA) and hipRTC (HIP). Run-time compilers give us no system
// headers: builtin types and the compilers' own device intrinsics only. A
// generated HIP source defines TT_HIP before including this file.
#ifndef TILETUNE_TT_DEVICE_H
#define TILETUNE_TT_DEVICE_H

#ifdef TT_HIP
// CDNA (gfx9) runs wavefronts of 64 lanes; the host-side search spaces of
// the HIP templates assume so too. TT_WAVEFRONT_SIZE is the HIP backend's
// word for the target's wave size (runtime/hip/hip_compile_plan.h).
#define TT_WARP_SIZE 64
#if (defined(__AMDGCN_WAVEFRONT_SIZE) && __AMDGCN_WAVEFRONT_SIZE != 64) || \
    (defined(TT_WAVEFRONT_SIZE) && TT_WAVEFRONT_SIZE != 64)
#error "tiletune's HIP kernels are written for wave64 targets (gfx9)"
#endif
#else
#define TT_WARP_SIZE 32
#endif

#define TT_DEVICE __device__ __forceinline__
// The entry of a generated kernel: a plain symbol the executor resolves by
// name, and the block size the compiler may budget registers for. On CUDA
// "at least 1 block per SM": without it ptxas budgets registers for as many
// blocks as an SM can hold (32 regs at 64 threads) and spills.
#ifdef TT_HIP
#define TT_KERNEL(threads) extern "C" __global__ void __launch_bounds__(threads)
#else
#define TT_KERNEL(threads) extern "C" __global__ void __launch_bounds__(threads, 1)
#endif

// The lowest finite float: the start of a running max that never makes
// exp(m - m') a NaN, as -inf would for two empty lanes.
#define TT_LOWEST (-3.402823466e+38f)

namespace tt {

// v of the lane whose index differs from this lane's by `lane_mask`.
TT_DEVICE float shfl_xor(float v, int lane_mask) {
#ifdef TT_HIP
  return __shfl_xor(v, lane_mask);
#else
  return __shfl_xor_sync(0xffffffffu, v, lane_mask);
#endif
}

// exp(x) through the hardware exp2 unit: a few ulp, for softmax where x <= 0.
TT_DEVICE float fast_exp(float x) {
  return __expf(x);
}

// V consecutive floats, aligned so that one instruction moves them (a float4
// load for V = 4). The pointer handed to load/store must be aligned alike.
template <int V>
struct alignas(4 * V) fvec {
  float x[V];
};

template <int V>
TT_DEVICE void load(fvec<V>& dst, const float* src) {
  dst = *reinterpret_cast<const fvec<V>*>(src);
}

template <int V>
TT_DEVICE void store(float* dst, const fvec<V>& src) {
  *reinterpret_cast<fvec<V>*>(dst) = src;
}

}  // namespace tt

#endif
