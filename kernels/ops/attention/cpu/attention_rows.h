// Host attention kernels: o = epilogue(softmax(scale * q kᵀ) v) per batch
// entry and query head, the query head h reading KV head
// h / (q_heads / kv_heads), optionally causal (bottom-right aligned). Config
// (generated per variant) holds head_dim, causal, masked (the additive mask
// tensor), write_lse and the tuning parameters as constants; Epi is the generated epilogue chain.
// With write_lse, each row's log-sum-exp goes to lse[b][h][i] (-inf for a row that sees no key).
// Every tensor is read by the strides of tt_attention_args, so BSHD and BHSD are the same code.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "ops/attention/attention_args.h"
#include "tt/host/abi.h"
#include "tt/host/math.h"
#include "tt/host/parallel.h"
#include "tt/host/rows.h"

namespace tt {

// Sixteen floats: one zmm register on AVX-512, split into ymm or xmm
// registers elsewhere. Head dims are multiples of it.
typedef float attention_vf16 __attribute__((vector_size(64)));
constexpr int64_t kAttentionLanes = 16;

// Where row `i` (a sequence position) of head `h` of batch entry `b` of a
// tensor starts.
inline int64_t attention_at(int64_t b, int64_t i, int64_t h, long long batch_stride,
                            long long seq_stride, long long head_stride) {
  return b * batch_stride + i * seq_stride + h * head_stride;
}

// Row (b, h, i)'s log-sum-exp of scores whose max is `max` and whose
// exp(score - max) sum to `sum`, into the dense [batch][q_heads][q_len] lse.
inline void attention_store_lse(const tt_attention_args* args, int64_t b, int64_t h, int64_t i,
                                float max, float sum) {
  floats(args->lse)[(b * args->q_heads + h) * args->q_len + i] =
      sum > 0.0f ? max + std::log(sum) : -std::numeric_limits<float>::infinity();
}

// The additive mask's row of query i of head h of batch entry b (kv_len
// values), or null without one.
inline const float* attention_mask_row(const tt_attention_args* args, int64_t b, int64_t h,
                                       int64_t i, bool masked) {
  if (!masked) return nullptr;
  return floats(args->mask) + b * args->mask_batch_stride + h * args->mask_head_stride +
         i * args->mask_q_stride;
}

// Keys query i of a q_len-long query block sees under the bottom-right
// aligned causal mask: [0, visible).
inline int64_t attention_visible(const tt_attention_args* args, int64_t i, bool causal) {
  if (!causal) return args->kv_len;
  return std::clamp<int64_t>(i + args->kv_len - args->q_len + 1, 0, args->kv_len);
}

// The tuned kernel: a task is block_q queries of one (batch entry, query
// head); it walks the keys in blocks of block_kv, transposing each block of k
// once so that every query of the task scores the whole block with vector
// FMAs across keys (no horizontal sums), then folds the block into each query's running
// max, sum and output (online softmax) with a vectorised exp, so scores are
// never stored beyond one block.
template <class Cfg, class Epi>
int attention_online(const tt_attention_args* args, const Epi& epi) {
  constexpr int64_t D = Cfg::head_dim, V = D / kAttentionLanes;
  constexpr int64_t BQ = Cfg::block_q, BKV = Cfg::block_kv, C = BKV / kAttentionLanes;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  static_assert(D % kAttentionLanes == 0, "head_dim is a multiple of the vector width");
  static_assert(BKV % kAttentionLanes == 0, "a key block is whole vectors");
  const int64_t group = args->q_heads / args->kv_heads;
  const int64_t q_blocks = (args->q_len + BQ - 1) / BQ;
  const float scale = args->scale;
  const float* q = floats(args->q);
  const float* k = floats(args->k);
  const float* v = floats(args->v);
  float* o = floats(args->o);
  tt::parallel_tasks(Cfg::threads, args->batch * args->q_heads * q_blocks, [&](int64_t task) {
    const int64_t b = task / (args->q_heads * q_blocks);
    const int64_t h = task / q_blocks % args->q_heads;
    const int64_t i0 = task % q_blocks * BQ, rows = std::min<int64_t>(BQ, args->q_len - i0);
    const int64_t g = h / group;
    auto key = [&](int64_t j) {
      return k +
             attention_at(b, j, g, args->k_batch_stride, args->k_seq_stride, args->k_head_stride);
    };
    attention_vf16 acc[BQ][V] = {};
    alignas(64) float kt[D][BKV];  // the key block, transposed (blocks of queries)
    alignas(64) float p[BKV];      // one query's scores, then probabilities
    float max[BQ], sum[BQ];
    const float* qr[BQ];
    const float* mask[BQ];
    int64_t visible[BQ], end = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      qr[r] =
          q + attention_at(b, i, h, args->q_batch_stride, args->q_seq_stride, args->q_head_stride);
      visible[r] = attention_visible(args, i, Cfg::causal != 0);
      mask[r] = attention_mask_row(args, b, h, i, Cfg::masked != 0);
      end = std::max(end, visible[r]);
      max[r] = kNegInf;
      sum[r] = 0.0f;
    }
    // Key blocks past every query's last visible key are skipped, not masked.
    for (int64_t j0 = 0; j0 < end; j0 += BKV) {
      const int64_t cols = std::min(BKV, end - j0);
      if constexpr (BQ > 1) {
        for (int64_t c = 0; c < cols; ++c) {
          const float* kc = key(j0 + c);
          for (int64_t d = 0; d < D; ++d) kt[d][c] = kc[d];
        }
        // The last block's missing keys score zero and are never read back.
        for (int64_t d = 0; d < D; ++d) std::fill(kt[d] + cols, kt[d] + BKV, 0.0f);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t seen = std::min(cols, visible[r] - j0);
        if (seen <= 0) continue;
        if constexpr (BQ == 1) {
          // One query: transposing the block would cost as much as scoring
          // it, so dot products, one horizontal sum per key.
          attention_vf16 qv[V];
          std::memcpy(qv, qr[r], sizeof qv);
          for (int64_t c = 0; c < seen; ++c) {
            attention_vf16 dot = {};
            for (int64_t x = 0; x < V; ++x) {
              attention_vf16 kx;
              std::memcpy(&kx, key(j0 + c) + x * kAttentionLanes, sizeof kx);
              dot += qv[x] * kx;
            }
            float total = 0.0f;
            for (int64_t lane = 0; lane < kAttentionLanes; ++lane) total += dot[lane];
            p[c] = total * scale;
          }
        } else {
          // Even and odd d sum apart: twice the independent FMA chains.
          attention_vf16 s[2][C] = {};
          for (int64_t d = 0; d < D; d += 2) {
            for (int64_t e = 0; e < 2; ++e) {
              const float qd = qr[r][d + e];
              for (int64_t x = 0; x < C; ++x) {
                attention_vf16 kd;
                std::memcpy(&kd, kt[d + e] + x * kAttentionLanes, sizeof kd);
                s[e][x] += qd * kd;
              }
            }
          }
          for (int64_t x = 0; x < C; ++x) {
            const attention_vf16 scores = (s[0][x] + s[1][x]) * scale;
            std::memcpy(p + x * kAttentionLanes, &scores, sizeof scores);
          }
        }
        if constexpr (Cfg::masked != 0) {
          for (int64_t c = 0; c < seen; ++c) p[c] += mask[r][j0 + c];
        }
        float block_max = max[r];
        for (int64_t c = 0; c < seen; ++c) block_max = std::max(block_max, p[c]);
        // Every key so far hidden by the mask: nothing to add.
        if (block_max == kNegInf) continue;
        // Rescale what the earlier blocks summed to the new max.
        const float correction = fast_exp(max[r] - block_max);
        max[r] = block_max;
        // fast_exp clamps: a key the mask hides must add exactly nothing.
        const float block_sum = lane_sum<kAttentionLanes>(seen, [&](int64_t c) {
          return p[c] = p[c] == kNegInf ? 0.0f : fast_exp(p[c] - block_max);
        });
        sum[r] = sum[r] * correction + block_sum;
        // The row's output stays in registers across the block, even and
        // odd keys summed apart (independent FMA chains).
        attention_vf16 out[2][V] = {};
        for (int64_t x = 0; x < V; ++x) out[0][x] = acc[r][x] * correction;
        for (int64_t c = 0; c < seen; ++c) {
          const float* vc = v + attention_at(b, j0 + c, g, args->v_batch_stride, args->v_seq_stride,
                                             args->v_head_stride);
          for (int64_t x = 0; x < V; ++x) {
            attention_vf16 vx;
            std::memcpy(&vx, vc + x * kAttentionLanes, sizeof vx);
            out[c & 1][x] += p[c] * vx;
          }
        }
        for (int64_t x = 0; x < V; ++x) acc[r][x] = out[0][x] + out[1][x];
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      // A query that sees no key writes zeros.
      const float inv = sum[r] > 0.0f ? 1.0f / sum[r] : 0.0f;
      const int64_t at =
          attention_at(b, i0 + r, h, args->o_batch_stride, args->o_seq_stride, args->o_head_stride);
      for (int64_t d = 0; d < D; ++d)
        o[at + d] = epi(acc[r][d / kAttentionLanes][d % kAttentionLanes] * inv, at + d, d);
      if constexpr (Cfg::write_lse != 0) attention_store_lse(args, b, h, i0 + r, max[r], sum[r]);
    }
  });
  return 0;
}

// The straightforward kernel the tuned one must beat: per query, every
// visible score into a row, its max and sum, then the weighted sum of v.
template <class Cfg, class Epi>
int attention_naive(const tt_attention_args* args, const Epi& epi) {
  const int64_t D = args->head_dim, group = args->q_heads / args->kv_heads;
  const float* q = floats(args->q);
  const float* k = floats(args->k);
  const float* v = floats(args->v);
  float* o = floats(args->o);
  std::vector<float> s(static_cast<size_t>(args->kv_len)), out(static_cast<size_t>(D));
  for (int64_t b = 0; b < args->batch; ++b) {
    for (int64_t h = 0; h < args->q_heads; ++h) {
      const int64_t g = h / group;
      for (int64_t i = 0; i < args->q_len; ++i) {
        const float* qi = q + attention_at(b, i, h, args->q_batch_stride, args->q_seq_stride,
                                           args->q_head_stride);
        const int64_t visible = attention_visible(args, i, Cfg::causal != 0);
        const float* mask = attention_mask_row(args, b, h, i, Cfg::masked != 0);
        float max = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < visible; ++j) {
          const float* kj = k + attention_at(b, j, g, args->k_batch_stride, args->k_seq_stride,
                                             args->k_head_stride);
          float dot = 0.0f;
          for (int64_t d = 0; d < D; ++d) dot += qi[d] * kj[d];
          s[j] = dot * args->scale + (mask ? mask[j] : 0.0f);
          max = std::max(max, s[j]);
        }
        float sum = 0.0f;
        std::fill(out.begin(), out.end(), 0.0f);
        // A row the mask hides whole sees no key.
        for (int64_t j = 0; max != -std::numeric_limits<float>::infinity() && j < visible; ++j) {
          const float p = std::exp(s[j] - max);
          sum += p;
          const float* vj = v + attention_at(b, j, g, args->v_batch_stride, args->v_seq_stride,
                                             args->v_head_stride);
          for (int64_t d = 0; d < D; ++d) out[d] += p * vj[d];
        }
        const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
        const int64_t at =
            attention_at(b, i, h, args->o_batch_stride, args->o_seq_stride, args->o_head_stride);
        for (int64_t d = 0; d < D; ++d) o[at + d] = epi(out[d] * inv, at + d, d);
        if constexpr (Cfg::write_lse != 0) attention_store_lse(args, b, h, i, max, sum);
      }
    }
  }
  return 0;
}

}  // namespace tt
