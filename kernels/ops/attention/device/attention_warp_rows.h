// The straightforward GPU attention the tuned kernels must beat: one warp
// per query row (batch entry, query head, position), each lane holding
// head_dim / warp size elements of q and of the output; the keys one by
// one, each score reduced across the warp, under a running max and sum.
//
// Config: in_type, out_type, head_dim, causal, masked (the additive mask
// tensor), write_lse, warps (per block).
// Rows are numbered (batch entry, head, position), lse's dense order.
#ifndef TILETUNE_OPS_ATTENTION_WARP_ROWS_H
#define TILETUNE_OPS_ATTENTION_WARP_ROWS_H

#include "ops/attention/attention_args.h"
#include "tt/reduce.h"
#include "tt/typed_memory.h"

namespace tt::attention {

template <class C, class Epilogue>
TT_DEVICE void attention_warp_rows(const tt_attention_args& args, const Epilogue& epilogue) {
  using T = typename C::in_type;
  using TO = typename C::out_type;
  constexpr int D = C::head_dim, per_lane = D / TT_WARP_SIZE;
  static_assert(D % TT_WARP_SIZE == 0, "each lane holds whole elements of a row");
  const long long row = static_cast<long long>(blockIdx.x) * C::warps + threadIdx.x / TT_WARP_SIZE;
  if (row >= args.batch * args.q_heads * args.q_len) return;
  const int lane = static_cast<int>(threadIdx.x % TT_WARP_SIZE);
  const long long i = row % args.q_len, h = row / args.q_len % args.q_heads;
  const long long b = row / (args.q_len * args.q_heads);
  const long long g = h / (args.q_heads / args.kv_heads);
  const T* q = static_cast<const T*>(args.q) + b * args.q_batch_stride + i * args.q_seq_stride +
               h * args.q_head_stride;
  const T* k = static_cast<const T*>(args.k) + b * args.k_batch_stride + g * args.k_head_stride;
  const T* v = static_cast<const T*>(args.v) + b * args.v_batch_stride + g * args.v_head_stride;
  // The additive mask's row of this query (kv_len values), when the key has one.
  const T* mask = static_cast<const T*>(args.mask) + b * args.mask_batch_stride +
                  h * args.mask_head_stride + i * args.mask_q_stride;
  float qv[per_lane], acc[per_lane];
#pragma unroll
  for (int x = 0; x < per_lane; ++x) {
    qv[x] = load_one(q, lane + x * TT_WARP_SIZE);
    acc[x] = 0.0f;
  }
  long long visible = args.kv_len;
  if (C::causal) {
    const long long last = i + args.kv_len - args.q_len + 1;
    visible = last < visible ? (last > 0 ? last : 0) : visible;
  }
  float max = TT_LOWEST, sum = 0.0f;
  for (long long j = 0; j < visible; ++j) {
    float dot = 0.0f;
#pragma unroll
    for (int x = 0; x < per_lane; ++x) {
      dot += qv[x] * load_one(k, j * args.k_seq_stride + lane + x * TT_WARP_SIZE);
    }
    float score = warp_reduce(dot, sum_reduce{}) * args.scale;
    if (C::masked) score += load_one(mask, j);  // -inf hides the key: p = 0
    const float new_max = score > max ? score : max;
    const float correction = __expf(max - new_max), p = __expf(score - new_max);
    sum = sum * correction + p;
#pragma unroll
    for (int x = 0; x < per_lane; ++x) {
      acc[x] =
          acc[x] * correction + p * load_one(v, j * args.v_seq_stride + lane + x * TT_WARP_SIZE);
    }
    max = new_max;
  }
  const float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
  const long long out = b * args.o_batch_stride + i * args.o_seq_stride + h * args.o_head_stride;
#pragma unroll
  for (int x = 0; x < per_lane; ++x) {
    const int col = lane + x * TT_WARP_SIZE;
    store_one(static_cast<TO*>(args.o), out + col, epilogue(acc[x] * inverse, out + col, col));
  }
  if (C::write_lse && lane == 0) {
    static_cast<float*>(args.lse)[row] =
        sum > 0.0f ? max + __logf(sum) : arch::to_float(bf16{0xff80});  // -inf
  }
}

}  // namespace tt::attention

#endif
