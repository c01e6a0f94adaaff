// Element-wise epilogue ops the fusion planner chains after a kernel's main
// computation, in the order of the key's chain. Each maps an output value `v`
// at linear output index `idx` and column `col` to a new value, so the chain
// runs in registers inside the kernel's store and never makes a second pass.
#pragma once

#include <cmath>
#include <cstdint>

#include "tt/host/abi.h"

namespace tt {

struct bias {
  const void* t;  // one f32 value per column (tt_chain_args.tensors)
  float operator()(float v, int64_t, int64_t col) const { return v + floats(t)[col]; }
};

struct scale {
  float s;
  float operator()(float v, int64_t, int64_t) const { return v * s; }
};

struct relu {
  float operator()(float v, int64_t, int64_t) const { return v > 0.0f ? v : 0.0f; }
};

struct gelu_tanh {
  float operator()(float v, int64_t, int64_t) const {
    return 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
};

struct gelu_erf {
  float operator()(float v, int64_t, int64_t) const {
    return 0.5f * v * (1.0f + std::erf(v * 0.7071067812f));
  }
};

struct silu {
  float operator()(float v, int64_t, int64_t) const { return v / (1.0f + std::exp(-v)); }
};

struct residual_add {
  const void* t;  // f32, shaped like the output (tt_chain_args.tensors)
  float operator()(float v, int64_t idx, int64_t) const { return v + floats(t)[idx]; }
};

// Host kernels only produce f32, so the one cast they serve is to f32.
struct cast_f32 {
  float operator()(float v, int64_t, int64_t) const { return v; }
};

}  // namespace tt
