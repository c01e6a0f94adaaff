// NVIDIA sm_90 leaf of the tile library: the tensor memory accelerator
// (TMA, the bulk tensor copy engine) and the shared-memory barriers
// (mbarrier) its copies complete on. One thread starts a whole tile's copy;
// the copy engine writes it into shared memory in the 128-byte swizzle that
// st<T, R, 64> and the wgmma descriptors use (tt/arch/sm90a_wgmma.h), and
// counts its bytes on a barrier the readers wait on.
//
// A tensor map (tt_tensor_map, tt/kernel_args.h) describes one operand in
// global memory and the box one copy moves; the launcher encodes it on the
// host (cuTensorMapEncodeTiled) and passes it inside the kernel's
// __grid_constant__ argument struct, where copies read it from.
#ifndef TILETUNE_TT_LEAF_SM90_TMA_H
#define TILETUNE_TT_LEAF_SM90_TMA_H

#include "tt/arch/sm80_mma_sync.h"
#include "tt/arch/sm90_cluster.h"
#include "tt/kernel_args.h"
#include "tt/tile_types.h"

namespace tt::tma {

// A barrier in shared memory: a phase completes when `arrivals` threads
// have arrived and every byte announced by expect_bytes has landed.
struct barrier {
  unsigned long long word;
};

TT_DEVICE unsigned address(const barrier& b) {
  return arch::shared_address(&b);
}

// One thread initialises; the block synchronises (and fence_init()s)
// before anyone else touches the barrier.
TT_DEVICE void init(barrier& b, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(address(b)), "r"(arrivals)
               : "memory");
}
// Makes initialised barriers visible to the copy engine (the async proxy).
TT_DEVICE void fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// This thread's arrival, announcing `bytes` the copy engine will deliver
// on the barrier in the current phase.
TT_DEVICE void arrive_expecting(barrier& b, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(address(b)),
               "r"(bytes)
               : "memory");
}
TT_DEVICE void arrive(barrier& b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(address(b)) : "memory");
}

// An arrival on cluster block `block`'s copy of `b` (b's offset in its
// shared memory), at the default scope as the cluster's pipelines need:
// a cluster-scope release on every k tile stalls the arriving warp.
TT_DEVICE void arrive_in(barrier& b, int block) {
  asm volatile(
      "mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(cluster::map_shared(address(b), block))
      : "memory");
}

// Waits until the phase of parity `phase` completed. A new barrier is in
// phase 0; waiting on parity 1 returns at once (the phase "before" it).
TT_DEVICE void wait(barrier& b, int phase) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "tt_wait:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra tt_wait;\n"
      "}" ::"r"(address(b)),
      "r"(phase)
      : "memory");
}

// Where a thread stands in a ring of `Stages` slots, each with its own
// barrier: the slot of its next copy and the parity of the phase it waits
// for there (the parity flips each time the ring wraps).
template <int Stages>
struct ring_cursor {
  int slot = 0, phase = 0;
  TT_DEVICE void next() {
    if (++slot == Stages) slot = 0, phase ^= 1;
  }
  TT_DEVICE void skip(int count) {
    slot += count;
    phase ^= (slot / Stages) & 1;
    slot %= Stages;
  }
};

// Pulls a tensor map into the constant cache before its first copy.
TT_DEVICE void prefetch(const tt_tensor_map& map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(&map) : "memory");
}

// Starts copying the box of `map` whose first element is (col0, row0) of
// batch entry `batch` (a rank-3 map: inner dimension, rows, batch) into
// `dst`, completing on `done`. Elements outside the tensor arrive as zeros.
// `dst` starts on a 1024-byte boundary (one 128-byte swizzle atom).
template <class T, int R, int C>
TT_DEVICE void load(st<T, R, C>& dst, const tt_tensor_map& map, barrier& done, int col0, int row0,
                    int batch) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(arch::shared_address(dst.data)),
      "l"(&map), "r"(col0), "r"(row0), "r"(batch), "r"(address(done))
      : "memory");
}

// load() into `dst` and `done` of every cluster block in the mask `blocks`
// (bit i: block i), at dst's and done's offsets in each one's shared memory.
template <class T, int R, int C>
TT_DEVICE void load_multicast(st<T, R, C>& dst, const tt_tensor_map& map, barrier& done, int col0,
                              int row0, int batch, unsigned short blocks) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(
          arch::shared_address(dst.data)),
      "l"(&map), "r"(col0), "r"(row0), "r"(batch), "r"(address(done)), "h"(blocks)
      : "memory");
}

// Starts copying `src` into the box of `map` at (col0, row0, batch); the
// copy engine clips what falls outside the tensor. Completes in bulk
// groups: store_commit() closes one, store_wait_read<N>() waits until `src`
// of all but N groups has been read.
template <class T, int R, int C>
TT_DEVICE void store(const tt_tensor_map& map, const st<T, R, C>& src, int col0, int row0,
                     int batch) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];" ::"l"(&map),
      "r"(col0), "r"(row0), "r"(batch), "r"(arch::shared_address(src.data))
      : "memory");
}
TT_DEVICE void store_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
template <int N>
TT_DEVICE void store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Shared memory written by ordinary stores becomes visible to the copy
// engine only after the writing thread runs this (then a barrier).
TT_DEVICE void fence_shared_for_copies() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Barrier `id` (1..15; 0 is __syncthreads') among `threads` threads of the
// block (a multiple of 32), e.g. one warpgroup.
TT_DEVICE void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// Counts this warp's threads towards barrier `id` without waiting: the
// other side of a named_sync (producer-consumer handoffs between warps).
TT_DEVICE void named_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace tt::tma

#endif
