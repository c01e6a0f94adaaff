// Element-wise epilogue ops the fusion planner chains after a GPU kernel's
// main computation, in the order of the key's chain (the device twins of
// kernels/host/include/tt_epilogue.h). Each maps an output value `v` at
// linear output index `idx` and column `col` to a new value, in registers,
// just before the kernel stores it. Tensors arrive as the untyped pointers
// of tt_kernel_args and are f32 (the only chain dtype GPU kernels take yet).
#ifndef TILETUNE_TT_EPILOGUE_H
#define TILETUNE_TT_EPILOGUE_H

#include "tt_device.h"

namespace tt {

struct bias {
  const void* t;  // one value per column
  TT_DEVICE float operator()(float v, long long, long long col) const {
    return v + static_cast<const float*>(t)[col];
  }
};

struct scale {
  float s;
  TT_DEVICE float operator()(float v, long long, long long) const { return v * s; }
};

struct relu {
  TT_DEVICE float operator()(float v, long long, long long) const { return v > 0.0f ? v : 0.0f; }
};

struct gelu_tanh {
  TT_DEVICE float operator()(float v, long long, long long) const {
    return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
};

struct gelu_erf {
  TT_DEVICE float operator()(float v, long long, long long) const {
    return 0.5f * v * (1.0f + erff(v * 0.7071067812f));
  }
};

struct silu {
  TT_DEVICE float operator()(float v, long long, long long) const { return v / (1.0f + expf(-v)); }
};

struct residual_add {
  const void* t;  // shaped like the output
  TT_DEVICE float operator()(float v, long long idx, long long) const {
    return v + static_cast<const float*>(t)[idx];
  }
};

// GPU kernels write f32 for now, so the one cast they serve is to f32.
struct cast_f32 {
  TT_DEVICE float operator()(float v, long long, long long) const { return v; }
};

}  // namespace tt

#endif
