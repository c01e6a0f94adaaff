#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/core/kernel_template.h"

namespace tiletune::kernels::gpu {

// A GPU vendor as the kernel templates see it: the backend that compiles
// its kernels and the number of lanes of the warps (wavefronts) they are
// compiled for, which launch geometry is built on. What a search space
// depends on of one device is its DeviceDescription.
struct GpuVendor {
  std::string_view backend;  // cuda, hip
  int warp_size;
};

inline constexpr GpuVendor kCuda{"cuda", 32};
// CDNA (gfx9: MI200, MI300) runs wave64.
inline constexpr GpuVendor kHip{"hip", 64};

// What one generated GPU kernel is: `function` is a device function template
// of the op's header (tt::softmax_rows, tt::gemm::wgmma_gemm...) called as
// function<Config>(args, epilogue) from a kernel of `block` threads, launched
// on `grid` blocks. Config holds `types` (element types: x_type/y_type for
// row kernels, a_type/b_type/out_type for GEMMs), `flags` and `config`
// constants. Every GPU template of every op writes its source through this.
struct GpuKernelSpec {
  std::string kernel_name;  // template name, or the baseline's name
  std::string entry;        // the kernel's symbol, unique per variant
  std::string header;       // "ops/softmax/device/softmax_rows.h"
  std::string function;     // "tt::softmax_rows"
  std::vector<std::pair<std::string, std::string>> types;
  std::vector<std::pair<std::string, bool>> flags;
  std::vector<std::pair<std::string, int64_t>> config;
  std::vector<std::string> defines;  // "TT_APPROX_TANH 1"
  std::string entry_attributes;      // between TT_KERNEL(threads) and the name
  std::string variant_text;          // a "// variant:" line when not empty
  std::array<int64_t, 3> grid = {0, 1, 1};
  std::array<int64_t, 3> block = {0, 1, 1};
  // Dynamic shared memory per block.
  int64_t shared_memory_bytes = 0;
  // > 0: a persistent grid of at most this many blocks per SM/CU, sized at
  // launch from the device (LaunchGeometry.blocks_per_compute_unit).
  int64_t blocks_per_compute_unit = 0;
  // Row kernels take the key's prologue as a second functor:
  // function<Config>(args, Prologue{&args}, Epilogue{&args}).
  bool takes_prologue = false;
  // TMA kernels: the entry takes `struct_name` (the op's struct as member
  // `op_member`, then tensor maps) as a __grid_constant__ argument of
  // `bytes`, and the launcher encodes `tensor_maps` into it
  // (LaunchGeometry.tensor_maps). Empty: the op's struct, by value.
  struct TmaArgument {
    std::string struct_name;  // "tt_gemm_tma_args"
    std::string op_member;    // "gemm"
    int64_t bytes = 0;
    std::vector<v1::TensorMapArgument> tensor_maps;
  };
  std::optional<TmaArgument> tma_argument;
};

// x_type and y_type: the key's input and output element types (the row,
// element-wise and SIMT GEMM kernels' Config).
std::vector<std::pair<std::string, std::string>> InputOutputTypes(const v1::KernelKey& key);

// Why a GPU kernel cannot serve the key's types, or nullopt. They read and
// write f32, bf16 or f16 (computing in f32), every prologue and chain tensor
// in one of those dtypes, and cast only to the output dtype.
std::optional<std::string> UnsupportedGpuTypes(const v1::KernelKey& key);

// The vector widths, in elements, the row and element-wise templates try:
// up to 16 bytes of the key's input type (1, 2, 4 floats; 1 to 8 bf16/f16).
std::vector<int64_t> VectorWidths(const v1::KernelKey& key);

// The device type of a dtype: float, tt::bf16 or tt::f16 (the tile
// library's). Throws std::invalid_argument for any other.
std::string DeviceType(v1::DType dtype);

// A symbol for a generated kernel: tiletune_<stem> and every parameter of the
// variant with its value, so that each variant (planted faults too) has its
// own name in profiles and logs.
std::string GpuEntry(std::string_view stem, const Variant& variant);

// The complete source of a GPU kernel for the key and vendor: the Config
// block, the epilogue chain (and prologue) as functors and one extern "C"
// __global__ entry taking the op's launch ABI struct (OpSpec.abi) by value
// (or spec.tma_argument's struct that holds it);
// its launch geometry; the embedded device headers. `planted_fault` is 0 for a real kernel, else
// one of kPlantedFault's: 1 never ends, 2 writes far past the output (illegal address), 3 adds 1 to
// every output.
KernelSource GenerateGpuSource(const v1::KernelKey& key, const GpuVendor& vendor,
                               const GpuKernelSpec& spec, int64_t planted_fault = 0);

}  // namespace tiletune::kernels::gpu
