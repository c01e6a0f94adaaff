// Element-wise epilogue ops for tile kernels, the functors that the shared
// chain generator (kernels/source/epilogue_source.h) names: each maps an output
// value `v` at linear output index `idx` and column `col` to a new value, in
// registers, before the kernel's single store. Tensors (bias, residual)
// hold chain_tensor_t elements: the generated source defines
// TT_CHAIN_TENSOR_T (tt::bf16, tt::f16 or float) before including this
// file, as the key's one chain-tensor dtype. The GPU row and element-wise
// kernels (kernels/gpu) take their prologues and epilogues from here too.
#ifndef TILETUNE_TT_TILE_EPILOGUE_H
#define TILETUNE_TT_TILE_EPILOGUE_H

#include "tt/tile.h"

#ifndef TT_CHAIN_TENSOR_T
#define TT_CHAIN_TENSOR_T float
#endif

namespace tt {

using chain_tensor_t = TT_CHAIN_TENSOR_T;

struct bias {
  const void* t;  // one value per column
  TT_DEVICE float operator()(float v, long long, long long col) const {
    return v + arch::to_float(static_cast<const chain_tensor_t*>(t)[col]);
  }
};

struct scale {
  float s;
  TT_DEVICE float operator()(float v, long long, long long) const { return v * s; }
};

struct relu {
  TT_DEVICE float operator()(float v, long long, long long) const { return v > 0.0f ? v : 0.0f; }
};

// A kernel whose output is 16-bit defines TT_APPROX_TANH: its store rounds
// away far more than the leaf's one-instruction tanh loses, and tanhf is a
// software routine of many instructions per output element.
TT_DEVICE float gelu_tanh_of(float x) {
#ifdef TT_APPROX_TANH
  return arch::tanh_approx(x);
#else
  return tanhf(x);
#endif
}

// 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))), factored to five
// multiply-adds and the tanh (a GEMM's epilogue runs it on every output).
struct gelu_tanh {
  TT_DEVICE float operator()(float v, long long, long long) const {
    const float u = v * fmaf(0.0356774081f * v, v, 0.7978845608f);
    const float h = 0.5f * v;
    return fmaf(h, gelu_tanh_of(u), h);
  }
};

struct gelu_erf {
  TT_DEVICE float operator()(float v, long long, long long) const {
    return 0.5f * v * (1.0f + erff(v * 0.7071067812f));
  }
};

struct silu {
  TT_DEVICE float operator()(float v, long long, long long) const {
    return v / (1.0f + __expf(-v));
  }
};

struct residual_add {
  const void* t;  // shaped like the output
  TT_DEVICE float operator()(float v, long long idx, long long) const {
    return v + arch::to_float(static_cast<const chain_tensor_t*>(t)[idx]);
  }
};

// A cast is the chain's last op and names the output dtype (templates reject
// any other), so the kernel's store does the rounding: here it is the identity.
struct cast_f32 {
  TT_DEVICE float operator()(float v, long long, long long) const { return v; }
};

}  // namespace tt

#endif
