// The launch ABI of attention, version 2:
//   o[b][i][h] = chain(softmax_j(scale * q[b][i][h] · k[b][j][g] + mask[b][h][i][j]) · v[b][j][g])
// with g = h / (q_heads / kv_heads) (grouped-query attention: each KV head
// serves q_heads / kv_heads consecutive query heads). The one by-value
// parameter of every GPU attention kernel and what a host attention
// kernel's entry points to. Layout asserted in attention_op.cpp, documented
// in docs/kernel-abi.md.
//
// Every tensor is [batch][seq][heads][head_dim] or [batch][heads][seq]
// [head_dim] (the key's layout, BSHD or BHSD): head_dim is contiguous and
// the other three dimensions are element strides, so both layouts (and
// views of a packed QKV buffer) are just strides. Strides of q, k, v and o
// are multiples of 8 elements (16 bytes: vector loads, cp.async, TMA).
//
// Causal masking is a property of the key, not a field: query i sees key j
// when j <= i + kv_len - q_len (aligned to the bottom right, as decode and
// chunked prefill need). A query row that sees no key (causal with
// q_len > kv_len) gets o = 0 and lse = -inf.
//
// No workspace: a split-KV decode kernel reduces its partial results
// within one launch (a thread-block cluster through distributed shared
// memory).
#ifndef TILETUNE_OPS_ATTENTION_ARGS_H
#define TILETUNE_OPS_ATTENTION_ARGS_H

#include "tt/kernel_args.h"

typedef struct tt_attention_args {
  // [batch][q_len][q_heads][head_dim] by q's strides, in the key's input dtype.
  const void* q;
  // [batch][kv_len][kv_heads][head_dim] by k's and v's strides.
  const void* k;
  const void* v;
  // The additive mask [batch][q_heads][q_len][kv_len], kv_len contiguous, in
  // the key's input dtype, added to the scaled scores (-inf hides a key);
  // mask_batch_stride or mask_head_stride 0 broadcasts it. Null unless the
  // key's mask kind is a tensor.
  const void* mask;
  // [batch][q_len][q_heads][head_dim] by o's strides, in the key's output
  // dtype.
  void* o;
  // f32 [batch][q_heads][q_len], dense: the natural log of each row's
  // softmax denominator, log(sum_j exp(scale * q · k_j + mask_j)). Null
  // unless the key asks for it.
  void* lse;
  tt_chain_args chain;
  long long batch, q_heads, kv_heads, q_len, kv_len, head_dim;
  // Element strides of batch entries, sequence positions and heads.
  long long q_batch_stride, q_seq_stride, q_head_stride;
  long long k_batch_stride, k_seq_stride, k_head_stride;
  long long v_batch_stride, v_seq_stride, v_head_stride;
  long long o_batch_stride, o_seq_stride, o_head_stride;
  // Element strides of the mask's batch entries, heads and query rows.
  long long mask_batch_stride, mask_head_stride, mask_q_stride;
  // The softmax scale (1/sqrt(head_dim) by default): a runtime value.
  float scale;
} tt_attention_args;

#endif
