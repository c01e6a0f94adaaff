#include "kernels/source/gpu_source.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/core/chain_ops.h"
#include "kernels/core/kernel_key.h"
#include "kernels/core/op_registry.h"
#include "kernels/source/device_headers.h"
#include "kernels/source/epilogue_source.h"
#include "kernels/source/kernel_config.h"

namespace tiletune::kernels::gpu {

namespace {

// The most blocks a launch may ask for along x (CUDA's limit; HIP's is larger).
constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;

std::string KernelBody(const GpuKernelSpec& spec, const OpSpec& op, int64_t planted_fault) {
  // The op's struct: the argument itself, or its member in a TMA argument.
  const std::string op_args =
      spec.tma_argument ? "args." + spec.tma_argument->op_member : std::string("args");
  const std::string call = "  " + spec.function + "<Config>(args, " +
                           (spec.takes_prologue ? "Prologue{&" + op_args + "}, " : "") +
                           "Epilogue{&" + op_args + "});\n";
  switch (planted_fault) {
    case 1:
      // An infinite loop without side effects may be deleted by the compiler;
      // a volatile read may not.
      return "  // planted fault: a kernel that never ends\n"
             "  __shared__ volatile int tt_release;\n"
             "  if (threadIdx.x == 0) tt_release = 0;\n"
             "  __syncthreads();\n"
             "  while (tt_release == 0) {\n  }\n" +
             call;
    case 2:
      // 4 TiB past the output is outside any allocation of any GPU.
      return "  // planted fault: a store far past the output (illegal address)\n"
             "  if (blockIdx.x == 0 && threadIdx.x == 0) {\n"
             "    static_cast<volatile float*>(" +
             op_args + "." + std::string(OutputTensor(op).name) +
             ")[1LL << 40] = 1.0f;\n"
             "  }\n" +
             call;
    default: return call;  // fault 3 lives in the epilogue
  }
}

bool IsDeviceType(v1::DType dtype) {
  return dtype == v1::DTYPE_F32 || dtype == v1::DTYPE_BF16 || dtype == v1::DTYPE_F16;
}

// The tensors of the prologue, then of the chain, with where they are in
// the key ("prologue[0]", "chain[2]").
std::vector<std::pair<std::string, v1::ChainOp>> TensorOps(const v1::KernelKey& key) {
  std::vector<std::pair<std::string, v1::ChainOp>> ops;
  for (int i = 0; i < key.prologue_size(); ++i) {
    if (ReadsTensor(key.prologue(i))) {
      ops.emplace_back("prologue[" + std::to_string(i) + "]", key.prologue(i));
    }
  }
  for (int i = 0; i < key.chain_size(); ++i) {
    if (ReadsTensor(key.chain(i)))
      ops.emplace_back("chain[" + std::to_string(i) + "]", key.chain(i));
  }
  return ops;
}

}  // namespace

std::string DeviceType(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_BF16: return "tt::bf16";
    case v1::DTYPE_F16: return "tt::f16";
    case v1::DTYPE_F32: return "float";
    default: throw std::invalid_argument("no device type for " + std::string(DTypeName(dtype)));
  }
}

std::vector<int64_t> VectorWidths(const v1::KernelKey& key) {
  if (NormalizeKernelKey(key).input_dtype() == v1::DTYPE_F32) return {1, 2, 4};
  return {1, 2, 4, 8};
}

std::optional<std::string> UnsupportedGpuTypes(const v1::KernelKey& key) {
  const v1::KernelKey k = NormalizeKernelKey(key);
  if (!IsDeviceType(k.input_dtype())) {
    return "GPU kernels take f32, bf16 or f16 inputs, not " +
           std::string(DTypeName(k.input_dtype()));
  }
  if (!IsDeviceType(k.output_dtype())) {
    return "GPU kernels write f32, bf16 or f16 outputs, not " +
           std::string(DTypeName(k.output_dtype()));
  }
  const auto tensors = TensorOps(k);
  for (const auto& [at, op] : tensors) {
    // One element type for every tensor of the prologue and the chain:
    // tt/epilogue.h reads them all as TT_CHAIN_TENSOR_T.
    if (op.dtype() != tensors.front().second.dtype()) {
      return at + " (" + op.op() + ") has dtype " + std::string(DTypeName(op.dtype())) + " but " +
             tensors.front().first + " has " +
             std::string(DTypeName(tensors.front().second.dtype())) +
             "; a GPU kernel reads every prologue and chain tensor in one dtype";
    }
    if (!IsDeviceType(op.dtype())) {
      return at + " (" + op.op() + ") has dtype " + std::string(DTypeName(op.dtype())) +
             "; GPU kernels read f32, bf16 or f16 tensors";
    }
  }
  for (int i = 0; i < k.chain_size(); ++i) {
    if (k.chain(i).op() == "cast" && k.chain(i).dtype() != k.output_dtype()) {
      return "chain[" + std::to_string(i) + "] (cast) casts to " +
             std::string(DTypeName(k.chain(i).dtype())) + " but the output is " +
             std::string(DTypeName(k.output_dtype())) +
             "; GPU kernels cast only to the output dtype (the store rounds to it)";
    }
  }
  return std::nullopt;
}

std::string GpuEntry(std::string_view stem, const Variant& variant) {
  std::string entry = "tiletune_" + std::string(stem);
  for (const auto& [name, value] : variant) entry += "_" + name + std::to_string(value);
  std::replace(entry.begin(), entry.end(), '-', '_');
  return entry;
}

std::vector<std::pair<std::string, std::string>> InputOutputTypes(const v1::KernelKey& raw) {
  const v1::KernelKey key = NormalizeKernelKey(raw);
  return {{"x_type", DeviceType(key.input_dtype())}, {"y_type", DeviceType(key.output_dtype())}};
}

KernelSource GenerateGpuSource(const v1::KernelKey& raw, const GpuVendor& vendor,
                               const GpuKernelSpec& spec, int64_t planted_fault) {
  const v1::KernelKey key = NormalizeKernelKey(raw);
  const auto tensors = TensorOps(key);
  std::string config = "struct Config {\n";
  for (const auto& [name, type] : spec.types) config += "  using " + name + " = " + type + ";\n";
  for (const auto& [name, value] : spec.flags) config += ConfigConstant("bool", name, value);
  for (const auto& [name, value] : spec.config) config += ConfigConstant("int", name, value);
  config += "};\n";
  std::string defines = vendor.backend == kHip.backend ? "#define TT_HIP 1\n" : "";
  if (!tensors.empty()) {
    defines += "#define TT_CHAIN_TENSOR_T " + DeviceType(tensors.front().second.dtype()) + "\n";
  }
  for (const std::string& d : spec.defines) defines += "#define " + d + "\n";
  const OpSpec& op = OpSpecOf(key.op());
  const std::string args_type(op.abi.struct_name);
  const EpilogueDialect dialect{args_type, "long long", "__device__ "};
  // Tensor maps are read where the argument lies (param space): the copy
  // engine takes their address, so the argument is a __grid_constant__.
  const std::string argument =
      spec.tma_argument ? "const __grid_constant__ " + spec.tma_argument->struct_name : args_type;

  KernelSource source;
  source.kernel_name = spec.kernel_name;
  source.entry = spec.entry;
  source.code =
      "// Generated by tiletune: " + spec.kernel_name + " for " + std::string(vendor.backend) +
      "\n// key: " + CanonicalKeyString(key) +
      (spec.variant_text.empty() ? "" : "\n// variant: " + spec.variant_text) + "\n" + defines +
      "#include \"tt/device.h\"\n#include \"" + std::string(op.abi.header) +
      "\"\n"
      "#include \"tt/epilogue.h\"\n#include \"" +
      spec.header + "\"\n\nnamespace {\n\n" + config + "\n" +
      (spec.takes_prologue ? PrologueFunctor(key, dialect) + "\n" : "") +
      EpilogueFunctor(key, dialect, planted_fault == 3) + "\n}  // namespace\n\nTT_KERNEL(" +
      std::to_string(spec.block[0] * spec.block[1] * spec.block[2]) + ") " + spec.entry_attributes +
      source.entry + "(" + argument + " args) {\n" + KernelBody(spec, op, planted_fault) + "}\n";
  source.headers = DeviceHeaders();
  // hipRTC defaults to C++14; the tile library is C++17 on both vendors.
  source.compile_options = {"-std=c++17"};
  source.launch.add_grid(std::clamp<int64_t>(spec.grid[0], 1, kMaxGridX));
  source.launch.add_grid(spec.grid[1]);
  source.launch.add_grid(spec.grid[2]);
  for (int64_t b : spec.block) source.launch.add_block(b);
  source.launch.set_shared_memory_bytes(spec.shared_memory_bytes);
  source.launch.set_blocks_per_compute_unit(static_cast<int32_t>(spec.blocks_per_compute_unit));
  if (spec.tma_argument) {
    for (const auto& map : spec.tma_argument->tensor_maps) *source.launch.add_tensor_maps() = map;
    source.launch.set_argument_bytes(spec.tma_argument->bytes);
  }
  return source;
}

}  // namespace tiletune::kernels::gpu
