#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tiletune::kernels {

// What a search space may depend on of the device it is tuned for. The
// daemon describes each device it opened (tuner/device_description_of.h);
// tests and benchmarks, which compile for devices they may not have, use the
// named compile targets below.
struct DeviceDescription {
  std::string backend;        // host, cuda, hip
  std::string arch;           // sm_90, gfx90a, x86_64
  int warp_size = 1;          // lanes of a warp (wavefront); 1 on the host
  int64_t compute_units = 1;  // SMs, CUs; cores on the host
  // The most dynamic shared memory (LDS) one block may use, opted in.
  int64_t max_shared_bytes_per_block = 0;
  // The device runs sm_90a code (wgmma, setmaxnreg): sm_90 only, as the
  // arch-specific features of later archs are others.
  bool has_sm90a = false;
  // Host: the system compiler links OpenBLAS, so the GEMM baseline is its
  // sgemm (otherwise our straightforward kernel).
  bool has_openblas = false;
  // 32-bit registers one lane may address: 255 on NVIDIA; 512 on CDNA2 and
  // later (VGPRs and AGPRs together). What it gets also depends on the
  // block's size (RegistersPerLane).
  int64_t max_registers_per_lane = 255;
  // The k of one 16-bit MMA step of the tile library's leaf (arch::mma_k):
  // 16 (mma.sync m16n8k16, MFMA 16x16x16); 32 on gfx950 (16x16x32).
  int64_t mma_k = 16;
};

// An SM (CU) has four SIMDs (sub-partitions), each with a register file of
// 512 registers a lane; a block's warps (waves) are spread over them.
constexpr int64_t kSimdsPerMultiprocessor = 4;
constexpr int64_t kSimdRegistersPerLane = 512;

// Registers each lane of a block of `threads` may hold without spilling:
// the SIMD's file shared by the warps of the block placed on it, at most
// what a lane may address (255 on NVIDIA, 256 on CDNA for 8 waves).
int64_t RegistersPerLane(int64_t max_registers_per_lane, int64_t warp_size, int64_t threads);
int64_t RegistersPerLane(const DeviceDescription& device, int64_t threads);

// H200 (sm_90): 132 SMs, 227 KiB of shared memory per block once the
// executor raises the dynamic limit, sm_90a.
inline const DeviceDescription kH200{"cuda", "sm_90", 32, 132, 227 * 1024, true};
// MI200 (gfx90a, MI250X's die): 110 CUs, wave64, 64 KiB of LDS.
inline const DeviceDescription kMi200{"hip", "gfx90a", 64, 110, 64 * 1024, false, false, 512};
// MI300X and MI325X (gfx942, CDNA3): 304 CUs, wave64, 64 KiB of LDS.
inline const DeviceDescription kMi300x{"hip", "gfx942", 64, 304, 64 * 1024, false, false, 512};
// MI355X (gfx950, CDNA4): 256 CUs, wave64, 160 KiB of LDS, MFMAs of k = 32.
inline const DeviceDescription kMi355x{"hip", "gfx950", 64, 256, 160 * 1024, false, false, 512, 32};
// A CPU of two cores (these machines'): the host templates offer one
// thread per core they may use (HostThreadCounts), at most two. OpenBLAS is
// there (deploy/install-deps.sh installs it).
inline const DeviceDescription kHostCpu{"host", "x86_64", 1, 2, 0, false, true};

// The named compile target of a backend (kH200, kMi200, kHostCpu), for what
// is built without a device: tests, benchmarks, the fuzzer. Throws
// std::invalid_argument for an unknown backend.
const DeviceDescription& CompileTargetOf(std::string_view backend);

// The named description of an arch (sm_90, gfx90a, gfx942, gfx950, x86_64),
// or nullptr when none is named.
const DeviceDescription* NamedDeviceOfArch(std::string_view arch);

}  // namespace tiletune::kernels
