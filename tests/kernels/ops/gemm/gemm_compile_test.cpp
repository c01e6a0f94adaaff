// Every variant the tile GEMM ships for a representative set of keys
// compiles with the real run-time compilers: NVRTC for sm_90 (wgmma
// variants for sm_90a, as the CUDA backend builds them) and hipRTC for
// gfx90a, no GPU needed. Skips, saying why, where a compiler is missing.
// One ctest test per key and compiler, so that `ctest -j` spreads them.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "kernels/core/kernel_template.h"
#include "kernels/ops/gemm/tile_gemm_source.h"
#include "kernels/ops/gemm/tile_gemm_space.h"
#include "kernels/ops/gemm/tma_and_decode_gemm_source.h"
#include "runtime/cuda/cubin_compiler.h"
#include "runtime/cuda/ptxas_report.h"
#include "runtime/rtc/rtc_compiler.h"
#include "tests/support/gemm_test_key.h"

namespace tiletune::kernels {
namespace {

using tiletune::testing::AllowingTf32;
using tiletune::testing::GatedBySwiglu;
using tiletune::testing::GemmTestKey;

struct KeyCase {
  const char* id;  // the test's name
  const char* name;
  v1::KernelKey key;
};

// bf16 and f16, every layout pair, odd and standard shapes, both regimes
// (split-K small-M tiles and large tiles) and every chain op; f32 allowing
// tf32 (CUDA's float tiles; HIP keeps gpu_gemm_tiled for them).
std::vector<KeyCase> Keys() {
  const auto B = v1::DTYPE_BF16, H = v1::DTYPE_F16, F = v1::DTYPE_F32;
  return {
      {"tf32_square_2048", "tf32 2048^3 f32 row/row",
       AllowingTf32(GemmTestKey(2048, 2048, 2048, 1, F, F, false, false, {}))},
      {"tf32_decode_16x4096", "tf32 decode 16x4096x4096 f32 row/col bias silu",
       AllowingTf32(GemmTestKey(16, 4096, 4096, 1, F, F, false, true, {"bias", "silu"}))},
      {"tf32_odd_every_chain_op", "tf32 odd 77x129x65 batch 2 f32 col/col, every chain op",
       AllowingTf32(GemmTestKey(
           77, 129, 65, 2, F, F, true, true,
           {"bias", "scale", "relu", "gelu_tanh", "gelu_erf", "silu", "residual_add"}))},
      {"tf32_col_row_300x200x136", "tf32 300x200x136 f32 col/row gelu",
       AllowingTf32(GemmTestKey(300, 200, 136, 1, F, F, true, false, {"gelu_tanh"}))},
      {"square_4096", "4096^3 bf16 row/col",
       GemmTestKey(4096, 4096, 4096, 1, B, B, false, true, {})},
      {"decode_16x14336", "decode 16x14336x4096 f16 row/row bias silu",
       GemmTestKey(16, 14336, 4096, 1, H, H, false, false, {"bias", "silu"})},
      {"odd_every_chain_op", "odd 37x53x29 batch 3 bf16 col/col, every chain op",
       GemmTestKey(
           37, 53, 29, 3, B, F, true, true,
           {"bias", "scale", "relu", "gelu_tanh", "gelu_erf", "silu", "residual_add", "cast"})},
      {"col_row_200x96x72", "200x96x72 f16 col/row",
       GemmTestKey(200, 96, 72, 1, H, B, true, false, {"gelu_erf"})},
      {"wgmma_split_k", "96x64x1024 f16 row/col bias gelu: 64-wide wgmma tiles, split-K clusters",
       GemmTestKey(96, 64, 1024, 1, H, H, false, true, {"bias", "gelu_tanh"})},
      // The decode families (m <= 64) and tma_ws_gemm on odd shapes: C rows
      // of 500 bytes store without TMA, a batch of 2, every decode m_pad.
      {"decode_16x4096_bias_silu", "decode 16x4096x4096 bf16 row/col bias silu",
       GemmTestKey(16, 4096, 4096, 1, B, B, false, true, {"bias", "silu"})},
      {"decode_odd_7x1000x1032", "decode 7x1000x1032 bf16 row/col bias gelu residual",
       GemmTestKey(7, 1000, 1032, 1, B, B, false, true, {"bias", "gelu_tanh", "residual_add"})},
      {"decode_odd_61x1000x1032", "decode 61x1000x1032 f16 row/col, f32 out",
       GemmTestKey(61, 1000, 1032, 1, H, F, false, true, {"relu"})},
      {"tma_ws_odd_300x250x136", "300x250x136 batch 2 f16 row/col relu",
       GemmTestKey(300, 250, 136, 2, H, H, false, true, {"relu"})},
      // tma_ws_gemm's N-major B panels and its tf32 wgmma.
      {"tma_ws_row_row_300x328x136", "300x328x136 batch 2 bf16 row/row bias gelu residual",
       GemmTestKey(300, 328, 136, 2, B, B, false, false, {"bias", "gelu_tanh", "residual_add"})},
      {"tma_ws_tf32_300x260x136", "tf32 300x260x136 f32 row/col silu",
       AllowingTf32(GemmTestKey(300, 260, 136, 1, F, F, false, true, {"silu"}))},
      // Gated keys: tile_gemm's second main loop (mma.sync, MFMA) on
      // decode and odd shapes, the stacked B boxes of tma_decode_gemm on
      // decode and of tma_ws_gemm on prefill (its N-major panels too).
      {"gated_decode_7x1000x1032", "swiglu 7x1000x1032 bf16 row/col bias",
       GatedBySwiglu(GemmTestKey(7, 1000, 1032, 1, B, B, false, true, {"bias"}))},
      {"gated_300x328x136", "swiglu 300x328x136 batch 2 f16 row/col residual, f32 out",
       GatedBySwiglu(GemmTestKey(300, 328, 136, 2, H, F, false, true, {"residual_add"}))},
      {"gated_row_row_300x328x136", "swiglu 300x328x136 bf16 row/row bias gelu",
       GatedBySwiglu(GemmTestKey(300, 328, 136, 1, B, B, false, false, {"bias", "gelu_tanh"}))}};
}

// What NVRTC sees for a source: the CUDA backend's target (sm_90a when the
// source asks), hipRTC the source's own options.
runtime::cuda::CubinTarget TargetFor(const KernelSource& source, const std::string& backend,
                                     const std::string& arch) {
  if (backend == "cuda") return runtime::cuda::CubinTargetFor(source, arch);
  return {arch, source.compile_options};
}

// Compiles every variant of every template serving the key (and the
// baseline) with `compiler` for `arch` on `threads` threads; fails with the
// logs of those that do not.
void ExpectAllCompile(runtime::RtcCompiler& compiler, const std::string& backend,
                      const std::string& arch, unsigned threads, const KeyCase& c) {
  std::string why;
  const auto templates = ServingKernelTemplates(c.key, backend, &why);
  ASSERT_FALSE(templates.empty()) << c.name << ": " << why;
  std::vector<KernelSource> sources;
  for (const KernelTemplate* t : templates) {
    for (const Variant& v : t->Space(c.key).ValidVariants()) sources.push_back(t->Source(c.key, v));
  }
  // HIP's naive GEMM; on cuda the pass after cuBLASLt, where the chain needs one.
  if (auto baseline = templates.front()->BaselineFor(c.key).source) {
    sources.push_back(std::move(*baseline));
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> failures(sources.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i) {
    pool.emplace_back([&] {
      for (size_t s; (s = next++) < sources.size();) {
        const KernelSource& source = sources[s];
        const runtime::cuda::CubinTarget target = TargetFor(source, backend, arch);
        const auto out = compiler.Compile(source.code, source.entry + ".cu", source.headers,
                                          target.options, target.arch);
        if (!out.ok || out.binary.empty()) {
          failures[s] = source.entry + ":\n" + out.log;
        } else if (const auto spills = runtime::cuda::ParsePtxasReport(out.log, source.entry);
                   (source.kernel_name == gemm::kTmaWsGemmName ||
                    source.kernel_name == gemm::kTmaDecodeGemmName) &&
                   spills.spill_bytes > 0) {
          // Their spaces hold no more accumulators than a warpgroup carries.
          failures[s] = source.entry + ": spills " + std::to_string(spills.spill_bytes) +
                        " bytes:\n" + out.log;
        } else if (out.log.find("serialized") != std::string::npos) {
          // ptxas falls back to waiting after every wgmma when it cannot
          // prove the accumulator untouched while in flight: correct, slow.
          failures[s] = source.entry + ": ptxas serialized its wgmma:\n" + out.log;
        }
      }
    });
  }
  for (auto& thread : pool) thread.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& f : failures) {
    if (!f.empty()) ADD_FAILURE() << f;
  }
  std::cout << compiler.version() << ": " << sources.size() << " GEMM sources of " << c.name
            << " for " << arch << " in " << seconds << " s on " << threads << " threads\n";
  ::testing::Test::RecordProperty("sources", static_cast<int>(sources.size()));
  ::testing::Test::RecordProperty("seconds", std::to_string(seconds));
}

class GemmCompile : public ::testing::TestWithParam<size_t> {};

INSTANTIATE_TEST_SUITE_P(Keys, GemmCompile, ::testing::Range(size_t{0}, Keys().size()),
                         [](const auto& test) { return std::string(Keys()[test.param].id); });

TEST_P(GemmCompile, EveryVariantForSm90WithNvrtc) {
  std::string why;
  const auto nvrtc = runtime::OpenNvrtc(&why);
  if (!nvrtc) GTEST_SKIP() << "no NVRTC: " << why;
  // NVRTC programs compile independently on separate threads.
  ExpectAllCompile(*nvrtc, "cuda", "sm_90", std::max(1u, std::thread::hardware_concurrency()),
                   Keys()[GetParam()]);
}

TEST_P(GemmCompile, EveryVariantForGfx90aWithHiprtc) {
  std::string why;
  const auto hiprtc = runtime::OpenHiprtc(&why);
  if (!hiprtc) GTEST_SKIP() << "no hipRTC: " << why;
  // ROCm 5's hipRTC makes no promise about threads: one at a time.
  ExpectAllCompile(*hiprtc, "hip", "gfx90a", 1, Keys()[GetParam()]);
}

// The CUDA target ships wgmma variants for the K-major layouts, asking for
// sm_90a; HIP and the other layouts get none.
TEST(GemmSources, WgmmaVariantsAskForSm90a) {
  for (const KeyCase& c : Keys()) {
    for (const char* backend : {"cuda", "hip"}) {
      std::string why;
      const KernelTemplate* t = FindKernelTemplate(c.key, backend, &why);
      ASSERT_TRUE(t) << why;
      const gemm::GemmProblem p = gemm::ProblemOf(c.key);
      if (c.key.input_dtype() == v1::DTYPE_F32 && std::string(backend) == "hip") {
        EXPECT_EQ(t->name(), "gpu_gemm_tiled") << c.name << ": gfx90a has no tf32 MFMA";
        continue;
      }
      ASSERT_EQ(t->name(), gemm::kTileGemmName) << c.name << " " << backend;
      int wgmma = 0;
      for (const Variant& v : t->Space(c.key).ValidVariants()) {
        const KernelSource source = t->Source(c.key, v);
        const bool asks = std::ranges::count(source.compile_options, kArchSpecificOption) == 1;
        EXPECT_EQ(asks, v.at("mma") == gemm::kMmaWarpgroup) << c.name << " " << source.entry;
        EXPECT_EQ(TargetFor(source, backend, "sm_90").arch, asks ? "sm_90a" : "sm_90");
        wgmma += asks;
      }
      // tf32 runs mma.sync only.
      const bool k_major =
          !p.a_col_major && p.b_col_major && p.m > 32 && p.element_bytes == 2 && !p.gated;
      EXPECT_EQ(wgmma > 0, k_major && std::string(backend) == "cuda") << c.name << " " << backend;
    }
  }
}

}  // namespace
}  // namespace tiletune::kernels
