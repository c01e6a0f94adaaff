#include "kernels/ops/gemm/tile_gemm_source.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/core/chain_ops.h"
#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/gemm_op.h"
#include "kernels/source/epilogue_source.h"

namespace tiletune::kernels::gemm {

namespace {

constexpr int64_t kMaxGridZ = 65535;
constexpr int64_t kNaiveTile = 16;  // gemm_naive.h: 16 x 16 threads, one per output
// The epilogue pass strides over the outputs: enough blocks to fill any GPU
// several times over, few enough that each thread handles several vectors
// of a large output.
constexpr int64_t kEpiloguePassThreads = 256;
constexpr int64_t kEpiloguePassMaxBlocks = 8192;

// The dtype every tensor of the chain holds, or nullopt when none has one.
std::optional<v1::DType> ChainTensorDtype(const v1::KernelKey& key) {
  for (const auto& op : key.chain()) {
    if (ReadsTensor(op)) return op.dtype();
  }
  return std::nullopt;
}

}  // namespace

gpu::GpuKernelSpec GemmSpec(const v1::KernelKey& key, const GemmProblem& p,
                            std::string_view kernel_name, std::string header,
                            std::string function) {
  gpu::GpuKernelSpec spec;
  spec.kernel_name = std::string(kernel_name);
  spec.entry = "tiletune_" + std::string(kernel_name);
  spec.header = std::move(header);
  spec.function = std::move(function);
  spec.types = {{"a_type", gpu::DeviceType(key.input_dtype())},
                {"b_type", gpu::DeviceType(key.input_dtype())},
                {"out_type", gpu::DeviceType(key.output_dtype())}};
  spec.flags = {{"a_col_major", p.a_col_major}, {"b_col_major", p.b_col_major}, {"gated", p.gated}};
  if (key.output_dtype() != v1::DTYPE_F32) spec.defines.emplace_back("TT_APPROX_TANH 1");
  return spec;
}

std::optional<std::string> UnsupportedTileGemm(const v1::KernelKey& raw) {
  const v1::KernelKey key = NormalizeKernelKey(raw);
  const std::string name(kTileGemmName);
  if (key.op() != kOpName) return name + " serves gemm, not " + key.op();
  const v1::DType in = key.input_dtype();
  if (in == v1::DTYPE_F32 && !key.allow_tf32()) {
    return name + " reads f32 inputs as tf32; this key does not allow tf32 (allow_tf32)";
  }
  if (in != v1::DTYPE_BF16 && in != v1::DTYPE_F16 && in != v1::DTYPE_F32) {
    return name + " takes bf16, f16 or f32 (as tf32) inputs, not " + std::string(DTypeName(in));
  }
  const v1::DType out = key.output_dtype();
  if (out != v1::DTYPE_BF16 && out != v1::DTYPE_F16 && out != v1::DTYPE_F32) {
    return name + " writes bf16, f16 or f32, not " + std::string(DTypeName(out));
  }
  const auto chain_dtype = ChainTensorDtype(key);
  for (int i = 0; i < key.chain_size(); ++i) {
    const v1::ChainOp& op = key.chain(i);
    const std::string at = "chain[" + std::to_string(i) + "] (" + op.op() + ")";
    if (ReadsTensor(op) && op.dtype() != *chain_dtype) {
      return at + " has dtype " + std::string(DTypeName(op.dtype())) + "; " + name +
             " needs every chain tensor in one dtype (the first is " +
             std::string(DTypeName(*chain_dtype)) + ")";
    }
    if (ReadsTensor(op) && op.dtype() == v1::DTYPE_F64) {
      return at + " has dtype f64; chain tensors are bf16, f16 or f32";
    }
    if (op.op() == "cast" && op.dtype() != out) {
      return at + " casts to " + std::string(DTypeName(op.dtype())) + " but the output is " +
             std::string(DTypeName(out)) + "; " + name + " casts only to the output dtype";
    }
  }
  if (const int64_t batch = DimSize(key, "batch").value_or(1); batch > kMaxGridZ) {
    return "batch " + std::to_string(batch) + " exceeds the " + std::to_string(kMaxGridZ) +
           " blocks of grid z";
  }
  return std::nullopt;
}

KernelSource TileGemmSource(const v1::KernelKey& raw, const GemmTarget& target,
                            const Variant& variant, int64_t planted_fault) {
  const v1::KernelKey key = NormalizeKernelKey(raw);
  const GemmProblem p = ProblemOf(key);
  Variant tuned;  // the variant without planted_fault
  for (const char* name : {"block_m", "block_n", "block_k", "warps_m", "warps_n", "warps_k",
                           "stages", "group_m", "mma", "split_k"}) {
    tuned[name] = RequiredParam(variant, kTileGemmName, name);
  }
  const bool wgmma = tuned["mma"] == kMmaWarpgroup;
  gpu::GpuKernelSpec spec = GemmSpec(
      key, p, kTileGemmName,
      wgmma ? "ops/gemm/device/gemm_sm90a_wgmma.h" : "ops/gemm/device/gemm_mma_multistage.h",
      wgmma ? "tt::gemm::wgmma_gemm" : "tt::gemm::tile_gemm");
  for (const char* name :
       {"block_m", "block_n", "block_k", "warps_m", "warps_n", "warps_k", "stages", "group_m"}) {
    spec.config.emplace_back(name, tuned[name]);
  }
  if (wgmma) spec.config.emplace_back("split_k", tuned["split_k"]);
  if (tuned["split_k"] > 1) {
    // The blocks that split a tile's k form one cluster (gemm_sm90a_wgmma.h).
    spec.entry_attributes = "__cluster_dims__(" + std::to_string(tuned["split_k"]) + ", 1, 1) ";
  }
  // 32x32 base tiles: the CDNA leaf's whole tile vocabulary switches (cdna_mfma.h).
  if (MmaTile(variant) == 32) spec.defines.emplace_back("TT_MFMA_32 1");
  const TileGemmLaunch launch = TileGemmLaunchOf(p, target, tuned);
  spec.config.emplace_back("vec_a", VectorWidth(p.lda, p.element_bytes));
  spec.config.emplace_back("vec_b", VectorWidth(p.ldb, p.element_bytes));
  spec.flags.emplace_back("out_aligned", p.ldc % target.store_run == 0);
  spec.config.emplace_back("shared_bytes", launch.shared_bytes);
  spec.entry = gpu::GpuEntry(kTileGemmName, variant);
  spec.variant_text = VariantString(variant);
  spec.grid = {launch.blocks, 1, launch.batch};
  spec.block = {launch.threads, 1, 1};
  spec.shared_memory_bytes = launch.shared_bytes;
  KernelSource source = gpu::GenerateGpuSource(key, target.vendor, spec, planted_fault);
  if (wgmma) source.compile_options.emplace_back(kArchSpecificOption);
  return source;
}

KernelSource NaiveGemmSource(const v1::KernelKey& raw, const GemmTarget& target) {
  const v1::KernelKey key = NormalizeKernelKey(raw);
  const GemmProblem p = ProblemOf(key);
  gpu::GpuKernelSpec spec =
      GemmSpec(key, p, kNaiveGemmName, "ops/gemm/device/gemm_naive.h", "tt::gemm::naive_gemm");
  spec.grid = {(p.m + kNaiveTile - 1) / kNaiveTile * ((p.n + kNaiveTile - 1) / kNaiveTile), 1,
               p.batch};
  spec.block = {kNaiveTile, kNaiveTile, 1};
  return gpu::GenerateGpuSource(key, target.vendor, spec);
}

KernelSource EpiloguePassSource(const v1::KernelKey& raw, const GemmTarget& target) {
  const v1::KernelKey key = NormalizeKernelKey(raw);
  const GemmProblem p = ProblemOf(key);
  gpu::GpuKernelSpec spec = GemmSpec(
      key, p, kEpiloguePassName, "ops/gemm/device/gemm_epilogue_pass.h", "tt::gemm::epilogue_pass");
  // Outputs per vector: at most 16 bytes' worth, dividing the row length.
  const int64_t vec = VectorWidth(p.ldc, key.output_dtype() == v1::DTYPE_F32 ? 4 : 2);
  spec.config.emplace_back("vec", vec);
  const int64_t vectors = p.batch * p.m * p.ldc / vec;
  spec.grid = {
      std::min(kEpiloguePassMaxBlocks, (vectors + kEpiloguePassThreads - 1) / kEpiloguePassThreads),
      1, 1};
  spec.block = {kEpiloguePassThreads, 1, 1};
  return gpu::GenerateGpuSource(key, target.vendor, spec);
}

}  // namespace tiletune::kernels::gemm
