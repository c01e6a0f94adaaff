#include "tuner/device_description_of.h"

#include <algorithm>
#include <map>

#include "runtime/hip/hip_compile_plan.h"

namespace tiletune::tuner {
namespace {

constexpr int64_t KiB = 1024;

// Opted-in shared memory per block of the NVIDIA archs (CUDA C Programming
// Guide, "Technical Specifications per Compute Capability").
int64_t KnownCudaSharedBytes(const std::string& arch) {
  static const std::map<std::string, int64_t> known = {
      {"sm_70", 96 * KiB},   {"sm_75", 64 * KiB}, {"sm_80", 163 * KiB}, {"sm_86", 99 * KiB},
      {"sm_87", 163 * KiB},  {"sm_89", 99 * KiB}, {"sm_90", 227 * KiB}, {"sm_100", 227 * KiB},
      {"sm_103", 227 * KiB}, {"sm_120", 99 * KiB}};
  const auto it = known.find(arch);
  return it == known.end() ? 48 * KiB : it->second;  // what every arch since sm_30 allows
}

}  // namespace

kernels::DeviceDescription DeviceDescriptionOf(const runtime::DeviceInfo& device) {
  const v1::DeviceFingerprint& fp = device.fingerprint;
  kernels::DeviceDescription d{.backend = device.backend,
                               .arch = fp.arch(),
                               .compute_units = std::max(1, fp.compute_units())};
  if (device.backend == "cuda") {
    d.warp_size = 32;
    d.max_shared_bytes_per_block = fp.max_shared_bytes_per_block() > 0
                                       ? fp.max_shared_bytes_per_block()
                                       : KnownCudaSharedBytes(fp.arch());
    d.has_sm90a = fp.arch() == "sm_90";
  } else if (device.backend == "hip") {
    const kernels::DeviceDescription* named = kernels::NamedDeviceOfArch(fp.arch());
    d.warp_size = runtime::hip::DefaultWavefrontSize(fp.arch()).value_or(64);
    // VGPRs and AGPRs together, as on every CDNA2 and later part.
    d.max_registers_per_lane = named ? named->max_registers_per_lane : 512;
    // The leaf's MMA step is the compiled arch's (tt/arch/cdna_mfma.h).
    d.mma_k = named ? named->mma_k : 16;
    // Where the device does not say: its named description's LDS (160 KiB
    // on gfx950), else 64 KiB, what every other CDNA and RDNA part has.
    d.max_shared_bytes_per_block = fp.max_shared_bytes_per_block() > 0
                                       ? fp.max_shared_bytes_per_block()
                                   : named ? named->max_shared_bytes_per_block
                                           : 64 * KiB;
  } else if (device.backend == "host") {
    d.has_openblas = device.has_openblas;
  }
  return d;
}

}  // namespace tiletune::tuner
