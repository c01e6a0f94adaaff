// The gate of a gated GEMM (KernelKey.gate, swiglu): the value the chain
// then applies to is silu(gate product) * up product, element by element.
#ifndef TILETUNE_TT_GEMM_GATE_H
#define TILETUNE_TT_GEMM_GATE_H

#include "tt/tile.h"

namespace tt::gemm {

TT_DEVICE float swiglu(float gate, float up) {
  return gate / (1.0f + __expf(-gate)) * up;
}

// gate = swiglu(gate, up) over two float register tiles of one shape.
template <class Tile>
TT_DEVICE void gate_with(Tile& gate, const Tile& up) {
#pragma unroll
  for (int i = 0; i < Tile::height; ++i)
#pragma unroll
    for (int j = 0; j < Tile::width; ++j)
#pragma unroll
      for (int e = 0; e < arch::frag::elems; ++e)
        gate.tiles[i][j].data[e] = swiglu(gate.tiles[i][j].data[e], up.tiles[i][j].data[e]);
}

}  // namespace tt::gemm

#endif
