#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/backend.h"

namespace tiletune::runtime::hip {

struct KernelArgumentMetadata {
  std::string value_kind;  // "by_value", "global_buffer", "hidden_global_offset_x"...
  int64_t offset = 0;
  int64_t size = 0;
};

// What an AMD GPU code object's metadata note (NT_AMDGPU_METADATA, code
// object v3 and later) says about one kernel: the compiler's resource report
// and the kernel's argument layout.
struct KernelMetadata {
  std::string name;
  std::string target;  // the code object's amdhsa.target, e.g. "amdgcn-amd-amdhsa--gfx90a"
  int64_t vgpr_count = 0;
  int64_t agpr_count = 0;  // accumulation registers (MFMA) on gfx908/gfx90a/gfx94x
  int64_t sgpr_count = 0;
  int64_t vgpr_spill_count = 0;
  int64_t sgpr_spill_count = 0;
  int64_t group_segment_fixed_size = 0;    // static LDS bytes per work-group
  int64_t private_segment_fixed_size = 0;  // scratch bytes per work-item
  int64_t kernarg_segment_size = 0;
  int64_t wavefront_size = 0;
  int64_t max_flat_workgroup_size = 0;
  std::vector<KernelArgumentMetadata> arguments;  // explicit ones first, then hidden
};

// Reads `kernel`'s metadata from a code object: an ELF for an AMD GPU, or
// the first one inside a clang offload bundle. Throws std::runtime_error
// saying what is missing or malformed; a code object without `kernel` names
// the kernels it has.
KernelMetadata ReadKernelMetadata(std::string_view code_object, std::string_view kernel);

// The compile report the tuner prunes with: registers are the VGPRs and AGPRs
// a work-item holds, spills count 4 bytes per spilled 32-bit register.
ResourceReport ToResourceReport(const KernelMetadata& metadata);

}  // namespace tiletune::runtime::hip
