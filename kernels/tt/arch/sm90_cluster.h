// NVIDIA sm_90 thread-block clusters: blocks of one cluster (a kernel
// declared with __cluster_dims__) run at the same time on one GPC and read
// each other's shared memory (distributed shared memory) and arrive on
// each other's barriers (tt/arch/sm90_tma.h).
#ifndef TILETUNE_TT_LEAF_SM90_CLUSTER_H
#define TILETUNE_TT_LEAF_SM90_CLUSTER_H

#include "tt/arch/sm80_mma_sync.h"

namespace tt::cluster {

// This block's index in its cluster.
TT_DEVICE int rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return static_cast<int>(r);
}

// Every thread of every block of the cluster arrives and waits; shared
// memory written before it is visible to the others' remote loads after it.
TT_DEVICE void sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}

// sync() for threads that may have diverged (one producer lane still in its
// loop while the rest of its warp is done): not .aligned.
TT_DEVICE void sync_diverged() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// The shared::cluster address of `address` (an offset in this block's
// shared memory) in the shared memory of cluster block `block`.
TT_DEVICE unsigned map_shared(unsigned address, int block) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(address), "r"(block));
  return remote;
}

// Four floats at `p` (16-byte aligned, in this block's shared memory) as
// they are in the shared memory of cluster block `block`.
TT_DEVICE void load_remote(float (&dst)[4], const float* p, int block) {
  const unsigned remote = map_shared(arch::shared_address(p), block);
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(dst[0]), "=f"(dst[1]), "=f"(dst[2]), "=f"(dst[3])
               : "r"(remote)
               : "memory");
}

// One float at `p` (in this block's shared memory) as it is in the shared
// memory of cluster block `block`.
TT_DEVICE float load_remote(const float* p, int block) {
  const unsigned remote = map_shared(arch::shared_address(p), block);
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
  return v;
}

}  // namespace tt::cluster

#endif
