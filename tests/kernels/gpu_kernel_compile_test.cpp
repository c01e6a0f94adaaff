// Every GPU kernel tiletune ships compiles, with no GPU: for representative
// keys (odd shapes, every chain op somewhere), every valid variant of each
// GPU template, its baseline and its planted faults go through NVRTC for
// sm_90, hipRTC for gfx90a and clang for gfx942/gfx950 (the compiler
// HipDeviceCompilerFor picks) with the options the backends use. A test
// skips, saying why, where a compiler library or clang is missing; clang
// present but unusable (no device libraries) fails.
#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "kernels/core/kernel_template.h"
#include "kernels/source/host_source.h"
#include "runtime/cuda/cubin_compiler.h"
#include "runtime/cuda/ptxas_report.h"
#include "runtime/hip/clang_hip_compiler.h"
#include "runtime/hip/code_object_metadata.h"
#include "runtime/hip/hip_compile_plan.h"
#include "runtime/rtc/rtc_compiler.h"
#include "runtime/subprocess.h"
#include "tests/support/test_key.h"

namespace tiletune {
namespace {

// Keys as a client writes them (tests/support/test_key.h).
const auto Key = [](const std::string& op, const std::vector<std::pair<std::string, int64_t>>& dims,
                    const std::vector<std::string>& chain = {}) {
  return testing::TestKey(op, dims, chain);
};

constexpr const char* kCudaArch = "sm_90";
// Static shared memory a block may declare, on both vendors.
constexpr int64_t kMaxStaticShared = 48 * 1024;

struct Problem {
  std::string name;
  std::string template_name;
  v1::KernelKey key;
  // Archs where the template has no variant for the key (it still names a
  // baseline): the space's rules say why.
  std::set<std::string> no_variants_on = {};
};

// The key with `ops` as its prologue (what the fusion planner puts in front
// of a row op: scale, mask, residual add).
v1::KernelKey WithPrologue(v1::KernelKey key, std::vector<std::string> ops) {
  for (const auto& name : ops) key.add_prologue()->set_op(name);
  return key;
}

// The key also writing its prologue's output (the residual stream).
v1::KernelKey WritingPrologue(v1::KernelKey key) {
  key.set_write_prologue_output(true);
  return key;
}

// The key reading and writing `dtype` (its tensors default to it too).
v1::KernelKey In(v1::DType dtype, v1::KernelKey key) {
  key.set_input_dtype(dtype);
  key.set_output_dtype(dtype);
  for (auto& op : *key.mutable_chain()) {
    if (op.op() == "cast") op.set_dtype(dtype);
  }
  return key;
}

// Between them: both row regimes (held in registers, several passes),
// rows_per_block > 1, Welford, every gemm tile, both layouts of A and B,
// batches, edges in every dimension, each chain op, prologues on row ops (and
// their written output, in both regimes) and bf16/f16 rows.
const std::vector<Problem>& Problems() {
  static const std::vector<Problem> problems = [] {
    v1::KernelKey col_major =
        Key("gemm", {{"m", 129}, {"n", 250}, {"k", 77}, {"batch", 3}}, {"relu"});
    for (const char* tensor : {"a", "b"}) {
      auto* l = col_major.add_layouts();
      l->set_tensor(tensor);
      l->set_layout(v1::LAYOUT_COL_MAJOR);
    }
    // f32 SwiGLU: B_up staged beside B, two accumulator sets (and the HIP
    // naive baseline's two sums).
    v1::KernelKey gated_col_major = col_major;
    gated_col_major.set_gate(v1::GATE_SWIGLU);
    // Attention: GQA, causal, BHSD, lengths no block divides; a decode query
    // over a long odd KV in f16 with a residual chain.
    v1::KernelKey attention_causal = In(v1::DTYPE_BF16, Key("attention", {{"batch", 2},
                                                                          {"q_heads", 8},
                                                                          {"kv_heads", 2},
                                                                          {"q_len", 77},
                                                                          {"kv_len", 131},
                                                                          {"head_dim", 128}}));
    attention_causal.set_attention_mask(v1::ATTENTION_MASK_CAUSAL);
    attention_causal.set_sequence_layout(v1::SEQUENCE_LAYOUT_BHSD);
    const v1::KernelKey attention_decode =
        In(v1::DTYPE_F16,
           Key("attention",
               {{"q_heads", 4}, {"kv_heads", 4}, {"q_len", 1}, {"kv_len", 4097}, {"head_dim", 64}},
               {"residual_add"}));
    // The split-KV decode writing lse, and its baseline (warp rows) too.
    v1::KernelKey attention_decode_lse = attention_decode;
    attention_decode_lse.set_write_lse(true);
    // The decode kernel adding a mask tensor to its packed rows.
    v1::KernelKey attention_decode_mask = attention_decode_lse;
    attention_decode_mask.set_attention_mask(v1::ATTENTION_MASK_TENSOR);
    // head_dim 256: on 32 lanes the flash kernel reads Q from shared memory.
    v1::KernelKey attention_d256 = In(v1::DTYPE_BF16, Key("attention", {{"batch", 1},
                                                                        {"q_heads", 4},
                                                                        {"kv_heads", 1},
                                                                        {"q_len", 77},
                                                                        {"kv_len", 131},
                                                                        {"head_dim", 256}}));
    attention_d256.set_attention_mask(v1::ATTENTION_MASK_CAUSAL);
    // The additive mask tensor and lse, in the flash kernels and their baseline.
    v1::KernelKey attention_mask_lse = attention_causal;
    attention_mask_lse.set_attention_mask(v1::ATTENTION_MASK_TENSOR);
    attention_mask_lse.set_write_lse(true);
    return std::vector<Problem>{
        {"attention_bf16_causal_gqa_77x131_d128", "gpu_attention_flash", attention_causal},
        {"attention_f16_decode_1x4097_d64", "gpu_attention_flash", attention_decode},
        {"attention_bf16_mask_lse_gqa_77x131_d128", "gpu_attention_flash", attention_mask_lse},
        // In 64 KiB of LDS (gfx90a, gfx942) with K and V tiles of 16 keys.
        {"attention_bf16_causal_77x131_d256", "gpu_attention_flash", attention_d256},
        {"attention_bf16_causal_gqa_77x131_d128_tma_ws", "tma_ws_attention", attention_causal},
        {"attention_bf16_mask_lse_gqa_77x131_d128_tma_ws", "tma_ws_attention", attention_mask_lse},
        {"attention_f16_decode_1x4097_d64_split_kv", "decode_attention", attention_decode},
        {"attention_f16_decode_1x4097_d64_split_kv_lse", "decode_attention", attention_decode_lse},
        {"attention_f16_decode_1x4097_d64_split_kv_mask_lse", "decode_attention",
         attention_decode_mask},
        {"softmax_37x1000_scale_mask", "gpu_softmax_rows",
         WithPrologue(Key("softmax", {{"rows", 37}, {"cols", 1000}}, {"bias", "scale"}),
                      {"scale", "residual_add"})},
        {"rmsnorm_37x1000_residual", "gpu_rmsnorm_rows",
         WithPrologue(Key("rmsnorm", {{"rows", 37}, {"cols", 1000}}, {"gelu_tanh", "cast"}),
                      {"residual_add"})},
        {"layernorm_3x50000_bias", "gpu_layernorm_rows",
         WithPrologue(
             Key("layernorm", {{"rows", 3}, {"cols", 50000}}, {"silu", "gelu_erf", "residual_add"}),
             {"bias"})},
        {"elementwise_37x1001", "gpu_elementwise",
         WithPrologue(Key("elementwise", {{"rows", 37}, {"cols", 1001}},
                          {"bias", "gelu_tanh", "residual_add"}),
                      {"scale"})},
        // 16-bit rows: vectors of up to 8 elements, tensors in the row's type.
        {"softmax_bf16_37x1000_scale_residual", "gpu_softmax_rows",
         In(v1::DTYPE_BF16,
            WithPrologue(Key("softmax", {{"rows", 37}, {"cols", 1000}}, {"bias", "scale"}),
                         {"scale", "residual_add"}))},
        {"rmsnorm_bf16_33x4097_residual", "gpu_rmsnorm_rows",
         In(v1::DTYPE_BF16, WithPrologue(Key("rmsnorm", {{"rows", 33}, {"cols", 4097}}, {"cast"}),
                                         {"residual_add"}))},
        {"rmsnorm_bf16_33x4097_residual_sum", "gpu_rmsnorm_rows",
         WritingPrologue(In(
             v1::DTYPE_BF16,
             WithPrologue(Key("rmsnorm", {{"rows", 33}, {"cols", 4097}}, {}), {"residual_add"})))},
        {"layernorm_3x50000_residual_sum", "gpu_layernorm_rows",
         WritingPrologue(
             WithPrologue(Key("layernorm", {{"rows", 3}, {"cols", 50000}}, {}), {"residual_add"}))},
        {"softmax_37x1000_masked_sum", "gpu_softmax_rows",
         WritingPrologue(WithPrologue(Key("softmax", {{"rows", 37}, {"cols", 1000}}, {}),
                                      {"scale", "residual_add"}))},
        {"layernorm_f16_3x50000_bias", "gpu_layernorm_rows",
         In(v1::DTYPE_F16,
            WithPrologue(Key("layernorm", {{"rows", 3}, {"cols", 50000}}, {"residual_add"}),
                         {"bias"}))},
        {"elementwise_bf16_37x1001", "gpu_elementwise",
         In(v1::DTYPE_BF16, Key("elementwise", {{"rows", 37}, {"cols", 1001}},
                                {"bias", "gelu_tanh", "residual_add", "cast"}))},
        {"gemm_37x53x29", "gpu_gemm_tiled",
         Key("gemm", {{"m", 37}, {"n", 53}, {"k", 29}}, {"bias", "relu"})},
        {"gemm_3x129x250x77_col_major", "gpu_gemm_tiled", col_major},
        {"gemm_swiglu_3x129x250x77_col_major", "gpu_gemm_tiled", gated_col_major},
        // The MFMA tile GEMM (every variant: gemm_compile_test).
        {"tile_gemm_bf16_257x250x136", "tile_gemm",
         In(v1::DTYPE_BF16, Key("gemm", {{"m", 257}, {"n", 250}, {"k", 136}}, {"bias", "silu"}))},
        {"tile_gemm_f16_64x128x256", "tile_gemm",
         In(v1::DTYPE_F16, Key("gemm", {{"m", 64}, {"n", 128}, {"k", 256}}, {"relu"}))},
    };
  }();
  return problems;
}

// What a test compiles for one key: the baseline's source (none for a
// cuBLASLt call that fuses the chain), the variants, and the three planted
// faults of the first variant. Variants that differ only in how they are
// launched (a row kernel's persistent grid) have one source, compiled once.
// With `sampled`, every variant source is not compiled but at most
// kSampledVariants of them, evenly spaced over the space's order (first and
// last included), and no faults: the extra AMD targets compile what gfx90a
// already compiles in full, gemm_compile_test every tile GEMM variant, and
// CI has two cores.
constexpr size_t kSampledVariants = 6;

// The space is the one on `device`, the named description of the target.
// What a template builds for a key: its baseline, its tuned variants
// (sources[variants_begin, variants_end)) and planted faults.
struct TemplateSources {
  std::vector<kernels::KernelSource> sources;
  size_t variants_begin = 0, variants_end = 0;
};

TemplateSources Sources(const kernels::KernelTemplate& t, const v1::KernelKey& key,
                        const kernels::DeviceDescription& device, bool sampled) {
  TemplateSources out;
  std::vector<kernels::KernelSource>& sources = out.sources;
  if (auto baseline = t.BaselineFor(key, device).source) sources.push_back(std::move(*baseline));
  out.variants_begin = sources.size();
  const auto variants = t.Space(key, device).ValidVariants();
  std::set<std::string> codes;
  std::vector<kernels::KernelSource> distinct;
  for (const auto& v : variants) {
    kernels::KernelSource source = t.Source(key, v);
    if (codes.insert(source.code).second) distinct.push_back(std::move(source));
  }
  if (sampled && distinct.size() > kSampledVariants) {
    for (size_t i = 0; i < kSampledVariants; ++i) {
      sources.push_back(std::move(distinct[i * (distinct.size() - 1) / (kSampledVariants - 1)]));
    }
  } else {
    for (auto& source : distinct) sources.push_back(std::move(source));
  }
  out.variants_end = sources.size();
  if (sampled || variants.empty()) return out;
  for (int64_t fault : {1, 2, 3}) {
    kernels::Variant planted = variants.at(0);
    planted[std::string(kernels::kPlantedFault)] = fault;
    sources.push_back(t.Source(key, planted));
  }
  return out;
}

// The compiler the backend runs for `target`.
runtime::RtcCompiler* Compiler(const std::string& target, std::string* why) {
  static std::string nvrtc_why, hiprtc_why, clang_why;
  static const auto nvrtc = runtime::OpenNvrtc(&nvrtc_why);
  static const auto hiprtc = runtime::OpenHiprtc(&hiprtc_why);
  static const auto clang = runtime::OpenClangHip(&clang_why);
  if (target == kCudaArch) {
    *why = nvrtc_why;
    return nvrtc.get();
  }
  if (runtime::hip::HipDeviceCompilerFor(target) == "clang") {
    *why = clang_why;
    return clang.get();
  }
  *why = hiprtc_why;
  return hiprtc.get();
}

// Compiles as the CUDA backend does, and checks the CUBIN's entry and what
// ptxas reports: tuned kernels must not spill.
void CompileForCuda(runtime::RtcCompiler& nvrtc, const kernels::KernelSource& source) {
  const runtime::cuda::CubinTarget target = runtime::cuda::CubinTargetFor(source, kCudaArch);
  const runtime::RtcOutput out =
      nvrtc.Compile(source.code, "kernel.cu", source.headers, target.options, target.arch);
  ASSERT_TRUE(out.ok) << source.entry << "\n" << out.log;
  EXPECT_NE(out.binary.find(source.entry), std::string::npos) << source.entry;
  const runtime::ResourceReport report = runtime::cuda::ParsePtxasReport(out.log, source.entry);
  EXPECT_GT(report.registers, 0) << source.entry << "\n" << out.log;
  EXPECT_EQ(report.spill_bytes, 0) << source.entry << "\n" << out.log;
  EXPECT_LE(report.shared_memory_bytes, kMaxStaticShared) << source.entry;
}

// EF_AMDGPU_MACH (the low byte of e_flags) of each target, from LLVM's
// BinaryFormat/ELF.h.
int ElfMachOf(const std::string& arch) {
  static const std::map<std::string, int> mach = {
      {"gfx90a", 0x3f}, {"gfx942", 0x4c}, {"gfx950", 0x4f}};
  return mach.at(arch);
}

// Of a CDNA lane's vector registers (the device's; the metadata's
// vgpr_count is the unified total on gfx90a and later) at most 256 are
// AGPRs; a wave has 102 SGPRs plus VCC, FLAT_SCRATCH and XNACK_MASK (6),
// which the metadata counts.
constexpr int64_t kMaxAgprs = 256, kMaxSgprs = 108;

// An LLVM 22 tool's output for `object` (written to a file below $TMPDIR).
std::string RunLlvmTool(const std::vector<std::string>& argv, const std::string& object) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("tiletune-check-" + std::to_string(::getpid()) + ".hsaco");
  std::ofstream(file, std::ios::binary) << object;
  std::vector<std::string> command = argv;
  command.push_back(file.string());
  const runtime::CommandResult run = runtime::RunCommand(command, std::chrono::minutes(5));
  std::filesystem::remove(file);
  EXPECT_TRUE(run.status.success()) << argv[0] << ": " << run.status.ToString() << "\n" << run.err;
  return run.out;
}

// The MFMA a matrix kernel's 16-bit operands run on an arch: gfx950's
// double-rate 16x16x32 (its 16x16x16 runs at CDNA3's rate), else 16x16x16;
// with 32x32 base tiles (a source defining TT_MFMA_32) 32x32x16 on gfx950,
// else 32x32x8.
std::string MfmaOf(const std::string& arch, const kernels::KernelSource& source) {
  const bool tile32 = source.code.find("#define TT_MFMA_32 1") != std::string::npos;
  if (tile32) return arch == "gfx950" ? "v_mfma_f32_32x32x16_" : "v_mfma_f32_32x32x8";
  return arch == "gfx950" ? "v_mfma_f32_16x16x32_" : "v_mfma_f32_16x16x16";
}

// The checks a code object passes without a GPU (no AMD GPU exists in CI):
// built for the arch (ELF flags), nothing left to resolve at load, every
// word of its text an instruction of the arch, and in matrix kernels the
// arch's MFMA (`mfma`, MfmaOf; empty: none expected) and no other, and on
// gfx942 / gfx950 loads into LDS. The tools come with llvm-22
// (deploy/install-deps.sh).
void CheckCodeObjectStatically(const std::string& object, const std::string& arch,
                               const std::string& mfma) {
  ASSERT_GE(object.size(), 64u);
  ASSERT_EQ(object.compare(0, 4,
                           "\x7f"
                           "ELF"),
            0);
  uint16_t machine = 0;
  uint32_t flags = 0;
  std::memcpy(&machine, object.data() + 18, sizeof machine);  // Elf64_Ehdr::e_machine
  std::memcpy(&flags, object.data() + 48, sizeof flags);      // Elf64_Ehdr::e_flags
  EXPECT_EQ(machine, EM_AMDGPU);
  EXPECT_EQ(static_cast<int>(flags & 0xff), ElfMachOf(arch)) << std::hex << flags;

  // Nothing for the loader to bind: no relocations, and no undefined symbol
  // but the rows' dynamic LDS array, which hipRTC's LLVM 15 leaves
  // undefined and unreferenced (its address is the static LDS size).
  EXPECT_NE(
      RunLlvmTool({"llvm-readelf-22", "--relocations"}, object).find("There are no relocations"),
      std::string::npos);
  std::stringstream undefined(RunLlvmTool({"llvm-nm-22", "--undefined-only"}, object));
  for (std::string kind, symbol; undefined >> kind >> symbol;) {
    EXPECT_EQ(symbol, "_ZN2tt12tt_row_cacheE") << "undefined symbol";
  }
  const std::string text = RunLlvmTool({"llvm-objdump-22", "-d", "--mcpu=" + arch}, object);
  EXPECT_NE(text.find("s_endpgm"), std::string::npos) << "no kernel code disassembled";
  EXPECT_EQ(text.find("<unknown>"), std::string::npos)
      << "words that are no " << arch << " instruction";
  if (!mfma.empty()) {
    // gfx950 loads whole 16-byte chunks of the operand tiles straight into
    // LDS, gfx942 4-byte words.
    if (arch == "gfx950" || arch == "gfx942") {
      const std::string load =
          arch == "gfx950" ? "global_load_lds_dwordx4" : "global_load_lds_dword";
      EXPECT_NE(text.find(load), std::string::npos) << "no " << load;
    }
    EXPECT_NE(text.find(mfma), std::string::npos) << "no " << mfma;
    for (size_t at = text.find("v_mfma_"); at != std::string::npos;
         at = text.find("v_mfma_", at + 1)) {
      EXPECT_EQ(text.compare(at, mfma.size(), mfma), 0) << text.substr(at, 40);
    }
  }
}

// Compiles as the HIP backend does (its options, tiletune-rtc's argument
// order), and checks the code object's metadata for the entry: the target,
// wave64, the block size as launch bound, registers and LDS within the
// arch's limits, no spills to memory, the by-value launch ABI struct; then
// the object itself (CheckCodeObjectStatically).
void CompileForHip(runtime::RtcCompiler& compiler, const kernels::KernelSource& source,
                   const std::string& arch, bool expect_mfma) {
  const auto plan = runtime::hip::PlanHipCompile(source, arch, compiler.version(), "rtc");
  const auto argv = plan.command.argv("/w", "/w/kernel.hip", "/w/kernel.hsaco");
  // tiletune-rtc COMPILER ARCH SOURCE ARTIFACT HEADER_DIR [OPTION...]
  ASSERT_EQ(argv[1], compiler.name());
  const std::vector<std::string> options(argv.begin() + 6, argv.end());
  const runtime::RtcOutput out =
      compiler.Compile(source.code, "kernel.hip", source.headers, options, arch);
  ASSERT_TRUE(out.ok) << source.entry << "\n" << out.log;
  CheckCodeObjectStatically(out.binary, arch, expect_mfma ? MfmaOf(arch, source) : "");
  const auto kernel = runtime::hip::ReadKernelMetadata(out.binary, source.entry);
  EXPECT_EQ(kernel.target, "amdgcn-amd-amdhsa--" + arch) << source.entry;
  EXPECT_EQ(kernel.wavefront_size, 64) << source.entry;
  // The launch bound admits the block (the tile GEMM's is a fixed 256).
  EXPECT_GE(kernel.max_flat_workgroup_size, source.launch.block(0)) << source.entry;
  EXPECT_LE(kernel.group_segment_fixed_size, kMaxStaticShared) << source.entry;
  EXPECT_LE(kernel.group_segment_fixed_size,
            kernels::NamedDeviceOfArch(arch)->max_shared_bytes_per_block)
      << source.entry;
  EXPECT_GT(kernel.vgpr_count, 0) << source.entry;
  EXPECT_LE(kernel.agpr_count, kMaxAgprs) << source.entry;
  // What the block's size leaves each lane: the bound the spaces assume.
  EXPECT_LE(kernel.vgpr_count,
            kernels::RegistersPerLane(*kernels::NamedDeviceOfArch(arch), source.launch.block(0)))
      << source.entry;
  EXPECT_LE(kernel.sgpr_count, kMaxSgprs) << source.entry;
  // SGPRs spill into VGPR lanes; VGPRs spill to scratch memory, which no
  // kernel of ours uses at all.
  EXPECT_EQ(kernel.vgpr_spill_count, 0) << source.entry;
  EXPECT_EQ(kernel.private_segment_fixed_size, 0) << source.entry;
  ASSERT_FALSE(kernel.arguments.empty()) << source.entry;
  EXPECT_EQ(kernel.arguments[0].value_kind, "by_value") << source.entry;
}

class GpuKernelsCompile : public ::testing::TestWithParam<std::tuple<std::string, size_t>> {};

INSTANTIATE_TEST_SUITE_P(Shipped, GpuKernelsCompile,
                         ::testing::Combine(::testing::Values(kCudaArch, "gfx90a", "gfx942",
                                                              "gfx950"),
                                            ::testing::Range(size_t{0}, Problems().size())),
                         [](const auto& test) {
                           return std::get<0>(test.param) + "_" +
                                  Problems()[std::get<1>(test.param)].name;
                         });

TEST_P(GpuKernelsCompile, EveryVariantBaselineAndFault) {
  const auto& [target, index] = GetParam();
  const std::string vendor = target == kCudaArch ? "cuda" : "hip";
  std::string why;
  runtime::RtcCompiler* compiler = Compiler(target, &why);
  // CI installs clang-22 (deploy/install-deps.sh): only its absence skips.
  if (!compiler && why.starts_with("no clang")) GTEST_SKIP() << why;
  ASSERT_TRUE(compiler || runtime::hip::HipDeviceCompilerFor(target) != "clang") << why;
  if (!compiler) GTEST_SKIP() << why;
  // NVRTC builds every tile GEMM variant in gemm_compile_test; here the
  // tile GEMM is for the AMD static checks (MFMA).
  if (vendor == "cuda" && Problems()[index].template_name == "tile_gemm") {
    GTEST_SKIP() << "tile GEMM on sm_90: gemm_compile_test";
  }
  const v1::KernelKey& key = Problems()[index].key;
  const kernels::KernelTemplate* t = nullptr;
  for (const auto& candidate : kernels::AllKernelTemplates()) {
    if (candidate->backend() == vendor && candidate->name() == Problems()[index].template_name) {
      t = candidate.get();
    }
  }
  if (!t) {
    // A template of one vendor only (the sm_90a families) is skipped on the other.
    for (const auto& candidate : kernels::AllKernelTemplates()) {
      if (candidate->name() == Problems()[index].template_name) {
        GTEST_SKIP() << candidate->name() << " is a " << candidate->backend() << " template";
      }
    }
  }
  ASSERT_TRUE(t) << Problems()[index].template_name << " is not in the catalog";
  const bool sampled = Problems()[index].template_name == "tile_gemm" ||
                       (vendor == "hip" && runtime::hip::HipDeviceCompilerFor(target) == "clang");
  const kernels::DeviceDescription* const device = kernels::NamedDeviceOfArch(target);
  ASSERT_TRUE(device) << target;
  const TemplateSources built = Sources(*t, key, *device, sampled);
  EXPECT_EQ(built.variants_begin == built.variants_end,
            Problems()[index].no_variants_on.contains(target))
      << t->Space(key, *device).ValidVariants().size() << " variants on " << target;
  // The tile GEMM's and the flash attention's variants run MFMA; their
  // baselines need not, and a planted fault may cut the main loop.
  const bool matrix = Problems()[index].template_name == "tile_gemm" ||
                      Problems()[index].template_name == "gpu_attention_flash";
  for (size_t i = 0; i < built.sources.size(); ++i) {
    const kernels::KernelSource& source = built.sources[i];
    SCOPED_TRACE(source.entry);
    if (vendor == "cuda") {
      CompileForCuda(*compiler, source);
    } else {
      CompileForHip(*compiler, source, target,
                    matrix && i >= built.variants_begin && i < built.variants_end);
    }
    if (HasFatalFailure()) return;
  }
  RecordProperty("kernels", static_cast<int>(built.sources.size()));
}

}  // namespace
}  // namespace tiletune
