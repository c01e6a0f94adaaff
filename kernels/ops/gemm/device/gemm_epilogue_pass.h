// The element-wise pass that follows a vendor library GEMM whose own
// epilogue cannot express the key's chain (the "unfused" sequence a user
// would otherwise run): reads each output value the library wrote, applies
// the whole chain and the output rounding, and writes it back in place.
//
// Config: out_type, vec (outputs per load and store, dividing ldc; 16 bytes
// for 16-bit outputs of a row length that allows it). Launch: any 1-D grid;
// threads stride over the batch * m * n outputs (dense, ldc = n) vec at a
// time, so the pass moves full 16-byte vectors and computes one column (a
// 64-bit division) per vector rather than per output.
//
// A gated key (Config gated): the library wrote both products side by side,
// gate then up, into a [batch * m][2 n] buffer the launcher passes as
// args.a; the pass writes chain(swiglu(gate, up)) to c.
#ifndef TILETUNE_TT_GEMM_EPILOGUE_H
#define TILETUNE_TT_GEMM_EPILOGUE_H

#include "ops/gemm/device/gemm_gate.h"
#include "ops/gemm/gemm_args.h"
#include "tt/tile.h"

namespace tt::gemm {

template <class C, class Epilogue>
TT_DEVICE void epilogue_pass(const tt_gemm_args& args, const Epilogue& epilogue) {
  using TO = typename C::out_type;
  constexpr int V = C::vec;
  struct alignas(sizeof(TO) * V) packet {
    TO x[V];
  };
  TO* out = static_cast<TO*>(args.c);
  const long long total = args.batch * args.m * args.ldc;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x * V;
  for (long long first = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * V;
       first < total; first += stride) {
    // V divides ldc, so a vector never spans two rows.
    const long long col = first % args.ldc;
    packet p;
    if constexpr (C::gated) {
      const TO* gate = static_cast<const TO*>(args.a) + first / args.ldc * 2 * args.n + col;
      const packet g = *reinterpret_cast<const packet*>(gate);
      const packet u = *reinterpret_cast<const packet*>(gate + args.n);
#pragma unroll
      for (int l = 0; l < V; ++l) {
        const float v = swiglu(arch::to_float(g.x[l]), arch::to_float(u.x[l]));
        p.x[l] = arch::convert<TO>::from(epilogue(v, first + l, col + l));
      }
    } else {
      p = *reinterpret_cast<const packet*>(out + first);
#pragma unroll
      for (int l = 0; l < V; ++l) {
        p.x[l] = arch::convert<TO>::from(epilogue(arch::to_float(p.x[l]), first + l, col + l));
      }
    }
    *reinterpret_cast<packet*>(out + first) = p;
  }
}

}  // namespace tt::gemm

#endif
