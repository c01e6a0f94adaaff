// A key's space spans every template of its backend that serves it.
#include "kernels/core/key_space.h"
#include "tests/support/test_key.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/tile_gemm_source.h"
#include "kernels/ops/gemm/tile_gemm_space.h"

namespace tiletune::kernels {
namespace {

v1::KernelKey Gemm(int64_t m, int64_t n, int64_t k, v1::DType dtype) {
  return NormalizeKernelKey(testing::GemmShapeKey(m, n, k, dtype));
}

// Valid variants per template name, as the union lists them.
std::map<std::string, size_t> VariantsPerTemplate(const KeySpace& space) {
  std::map<std::string, size_t> counts;
  for (const Variant& v : space.ValidVariants()) ++counts[std::string(space.TemplateOf(v).name())];
  return counts;
}

// A decode GEMM in f32 allowing tf32: the tensor-core tile GEMM and the SIMT
// gpu_gemm_tiled both serve it on CUDA. (bf16 and f16 keys have only
// tile_gemm: gemm_simt.h computes on float tiles.)
TEST(KeySpace, ADecodeGemmSpansTheTileAndTheSimtGemm) {
  v1::KernelKey key = Gemm(16, 4096, 4096, v1::DTYPE_F32);
  key.set_allow_tf32(true);
  std::string why;
  const KeySpace space = KeySpace::Of(key, kH200, &why);
  ASSERT_EQ(space.templates().size(), 2u) << why;
  EXPECT_EQ(space.first().name(), gemm::kTileGemmName);
  const auto counts = VariantsPerTemplate(space);
  EXPECT_GT(counts.at(std::string(gemm::kTileGemmName)), 0u);
  EXPECT_GT(counts.at("gpu_gemm_tiled"), 0u);
  // Each template's variants are its own space's, tagged with its index.
  for (const Variant& v : space.ValidVariants()) {
    const int64_t index = v.at(std::string(kTemplateParameter));
    EXPECT_EQ(&space.TemplateOf(v), space.templates()[index].kernel);
    EXPECT_FALSE(space.templates()[index].space.Violation(OwnParameters(v))) << VariantString(v);
  }

  const KeySpace bf16 = KeySpace::Of(Gemm(16, 4096, 4096, v1::DTYPE_BF16), kH200, &why);
  ASSERT_EQ(bf16.templates().size(), 1u);
  EXPECT_EQ(bf16.first().name(), gemm::kTileGemmName);
}

// x @ W.t() in bf16 (B column-major): the decode families compete with the
// tile GEMM for m <= 64, tma_ws_gemm above; the tile GEMM stays first (its
// baseline, cuBLASLt, is every family's).
TEST(KeySpace, KMajorBf16GemmsSpanTheDecodeOrTmaFamilies) {
  auto k_major = [](int64_t m) {
    v1::KernelKey key = Gemm(m, 4096, 4096, v1::DTYPE_BF16);
    auto* layout = key.add_layouts();
    layout->set_tensor("b");
    layout->set_layout(v1::LAYOUT_COL_MAJOR);
    return key;
  };
  std::string why;
  const KeySpace decode = KeySpace::Of(k_major(16), kH200, &why);
  ASSERT_EQ(decode.templates().size(), 3u) << why;
  EXPECT_EQ(decode.first().name(), gemm::kTileGemmName);
  const auto decode_counts = VariantsPerTemplate(decode);
  EXPECT_GT(decode_counts.at("tma_decode_gemm"), 0u);
  EXPECT_GT(decode_counts.at("mma_decode_gemm"), 0u);
  const KeySpace prefill = KeySpace::Of(k_major(4096), kH200, &why);
  ASSERT_EQ(prefill.templates().size(), 2u) << why;
  EXPECT_GT(VariantsPerTemplate(prefill).at("tma_ws_gemm"), 0u);

  // A gate: tma_decode_gemm stacks b's and b_up's weight rows, so its
  // blocks split k only while the half-width tiles leave SMs idle;
  // mma_decode_gemm computes no gate.
  v1::KernelKey gated = k_major(16);
  gated.set_gate(v1::GATE_SWIGLU);
  const KeySpace gated_decode = KeySpace::Of(gated, kH200, &why);
  ASSERT_EQ(gated_decode.templates().size(), 2u) << why;
  EXPECT_FALSE(gated_decode.IndexOf("mma_decode_gemm"));
  bool splits = false;
  for (const auto& [name, count] : VariantsPerTemplate(gated_decode)) EXPECT_GT(count, 0u) << name;
  for (const Variant& v :
       gated_decode.templates()[*gated_decode.IndexOf("tma_decode_gemm")].space.ValidVariants()) {
    // 4096 columns: 128 or 64 tiles of 64 or 128 weight rows; split in at most 2 waves.
    const int64_t tiles = 4096 / (v.at("block_w") / 2);
    EXPECT_LE(tiles * v.at("split_k"), 2 * kH200.compute_units) << VariantString(v);
    splits |= v.at("split_k") > 1;
  }
  EXPECT_TRUE(splits);
}

// Prefill with two 128 x 128 tiles an SM is tma_ws_gemm's alone to search;
// the tile GEMM's variants still serve records (Only). Fewer tiles, or a
// device without sm_90a, and the tile GEMM is searched again.
TEST(KeySpace, TheTileGemmLeavesLargePrefillToTmaWsGemm) {
  std::string why;
  const v1::KernelKey large = Gemm(2048, 4096, 4096, v1::DTYPE_BF16);  // 512 tiles, 132 SMs
  const KeySpace prefill = KeySpace::Of(large, kH200, &why);
  ASSERT_EQ(prefill.templates().size(), 2u) << why;
  EXPECT_FALSE(prefill.templates()[0].searched);
  const auto counts = VariantsPerTemplate(prefill);
  EXPECT_FALSE(counts.contains(std::string(gemm::kTileGemmName)));
  EXPECT_GT(counts.at("tma_ws_gemm"), 0u);
  const Variant tile = prefill.templates()[0].space.ValidVariants().front();
  EXPECT_FALSE(prefill.Only(gemm::kTileGemmName, tile, &why).empty()) << why;

  // 128 x 2048: 16 tiles.
  const KeySpace narrow = KeySpace::Of(Gemm(128, 2048, 4096, v1::DTYPE_BF16), kH200, &why);
  EXPECT_GT(VariantsPerTemplate(narrow).at(std::string(gemm::kTileGemmName)), 0u);
  DeviceDescription no_sm90a = kH200;
  no_sm90a.has_sm90a = false;
  EXPECT_GT(
      VariantsPerTemplate(KeySpace::Of(large, no_sm90a, &why)).at(std::string(gemm::kTileGemmName)),
      0u);
}

// tma_ws_gemm also reads a 16-bit B stored row-major (wgmma transposes its
// N-major panels) and f32 as tf32 with B column-major; tf32 wgmma cannot
// transpose, so a row-major B in f32 stays with the other families.
TEST(KeySpace, TmaWsGemmTakesRowMajorBAndTf32) {
  std::string why;
  const KeySpace rows = KeySpace::Of(Gemm(4096, 4096, 4096, v1::DTYPE_BF16), kH200, &why);
  ASSERT_TRUE(rows.IndexOf("tma_ws_gemm")) << why;
  EXPECT_GT(VariantsPerTemplate(rows).at("tma_ws_gemm"), 0u);
  // A gate takes the first half of the N-major panels from b, the second from b_up.
  v1::KernelKey gated_rows = Gemm(4096, 4096, 4096, v1::DTYPE_BF16);
  gated_rows.set_gate(v1::GATE_SWIGLU);
  EXPECT_GT(VariantsPerTemplate(KeySpace::Of(gated_rows, kH200, &why)).at("tma_ws_gemm"), 0u)
      << why;

  v1::KernelKey tf32 = Gemm(4096, 4096, 4096, v1::DTYPE_F32);
  tf32.set_allow_tf32(true);
  const KeySpace tf32_rows = KeySpace::Of(tf32, kH200, &why);
  EXPECT_EQ(tf32_rows.IndexOf("tma_ws_gemm"), std::nullopt);
  auto* layout = tf32.add_layouts();
  layout->set_tensor("b");
  layout->set_layout(v1::LAYOUT_COL_MAJOR);
  const KeySpace tf32_k_major = KeySpace::Of(tf32, kH200, &why);
  ASSERT_TRUE(tf32_k_major.IndexOf("tma_ws_gemm")) << why;
  EXPECT_GT(VariantsPerTemplate(tf32_k_major).at("tma_ws_gemm"), 0u);

  // f32 without tf32 is exact: no tensor-core family takes it.
  tf32.set_allow_tf32(false);
  EXPECT_EQ(KeySpace::Of(tf32, kH200, &why).IndexOf("tma_ws_gemm"), std::nullopt);
}

TEST(KeySpace, HostGemmsSpanTheBlockedAndTheRowwiseGemm) {
  const v1::KernelKey key = Gemm(8, 64, 8, v1::DTYPE_F32);
  std::string why;
  const KeySpace space = KeySpace::Of(key, kHostCpu, &why);
  ASSERT_EQ(space.templates().size(), 2u) << why;
  EXPECT_EQ(space.first().name(), "host_gemm_blocked");
  EXPECT_EQ(space.IndexOf("host_gemm_rowwise"), 1);
  EXPECT_EQ(space.IndexOf("gpu_gemm_tiled"), std::nullopt);
  const auto counts = VariantsPerTemplate(space);
  EXPECT_EQ(counts.at("host_gemm_blocked"), space.templates()[0].space.ValidVariants().size());
  EXPECT_EQ(counts.at("host_gemm_rowwise"), 2u);  // threads 1 and 2
  // Sources come from the variant's own template, without the template index.
  const Variant rowwise = space.ValidVariants().back();
  const KernelSource source = space.TemplateOf(rowwise).Source(key, OwnParameters(rowwise));
  EXPECT_EQ(source.kernel_name, "host_gemm_rowwise");
  EXPECT_NE(source.code.find("tt::gemm_rowwise"), std::string::npos);
}

// A bf16 GEMM with B column-major (K-major operands: wgmma's layout).
v1::KernelKey KMajorGemm(int64_t m, int64_t n, int64_t k) {
  v1::KernelKey key = Gemm(m, n, k, v1::DTYPE_BF16);
  auto* l = key.add_layouts();
  l->set_tensor("b");
  l->set_layout(v1::LAYOUT_COL_MAJOR);
  return NormalizeKernelKey(key);
}

std::vector<Variant> TileGemmVariants(const v1::KernelKey& key, const DeviceDescription& device) {
  std::string why;
  const KeySpace space = KeySpace::Of(key, device, &why);
  EXPECT_FALSE(space.empty()) << why;
  return space.empty() ? std::vector<Variant>{} : space.templates()[0].space.ValidVariants();
}

size_t Count(const std::vector<Variant>& variants, const char* name, int64_t value) {
  return std::count_if(variants.begin(), variants.end(),
                       [&](const Variant& v) { return v.at(name) == value; });
}

// The named H200 and MI200 are the targets the tile GEMM was tuned for: the
// spaces on them are the ones the fixed targets gave.
// A daemon limited to one CPU (host_cpus 1) is offered no two-thread
// variant: it would time one fighting itself for the core.
TEST(KeySpace, HostThreadCountsFollowTheCpusTheDaemonMayUse) {
  const v1::KernelKey key = Gemm(64, 64, 64, v1::DTYPE_F32);
  DeviceDescription one_cpu = kHostCpu;
  one_cpu.compute_units = 1;
  std::string why;
  const KeySpace narrow = KeySpace::Of(key, one_cpu, &why);
  ASSERT_FALSE(narrow.empty()) << why;
  for (const Variant& v : narrow.ValidVariants()) EXPECT_EQ(v.at("threads"), 1) << VariantString(v);
  std::set<int64_t> threads;
  for (const Variant& v : KeySpace::Of(key, kHostCpu, &why).ValidVariants()) {
    threads.insert(v.at("threads"));
  }
  EXPECT_EQ(threads, (std::set<int64_t>{1, 2}));
}

TEST(KeySpace, TheH200AndMi200SeeTheSpacesOfTheirTargets) {
  for (const auto& [leaf, device] :
       {std::pair{gemm::kSm90Target, kH200}, std::pair{gemm::kGfx90aTarget, kMi200}}) {
    const gemm::GemmTarget on = gemm::GemmTargetOn(leaf, device);
    EXPECT_EQ(on.max_shared_bytes, leaf.max_shared_bytes) << device.arch;
    EXPECT_EQ(on.multiprocessors, leaf.multiprocessors) << device.arch;
    EXPECT_EQ(on.warpgroup_mma, leaf.warpgroup_mma) << device.arch;
    for (const v1::KernelKey& key : {KMajorGemm(4096, 4096, 4096), KMajorGemm(128, 1024, 8192),
                                     KMajorGemm(16, 4096, 4096), Gemm(37, 53, 29, v1::DTYPE_F16)}) {
      EXPECT_EQ(TileGemmVariants(key, device),
                gemm::TileGemmSpace(gemm::ProblemOf(key), leaf).ValidVariants())
          << device.arch << " " << CanonicalKeyString(key);
    }
  }
}

// An sm_90 device is an H200 with fewer SMs here: a MIG 1g slice (16 SMs).
DeviceDescription H200Slice() {
  DeviceDescription d = kH200;
  d.compute_units = 16;
  return d;
}

TEST(KeySpace, WgmmaVariantsOnlyWhereTheDeviceRunsSm90a) {
  const v1::KernelKey key = KMajorGemm(4096, 4096, 4096);
  EXPECT_GT(Count(TileGemmVariants(key, kH200), "mma", gemm::kMmaWarpgroup), 0u);
  // An A100 (sm_80): 108 SMs, 163 KiB per block, no sm_90a.
  const DeviceDescription a100{"cuda", "sm_80", 32, 108, 163 * 1024, false};
  const auto variants = TileGemmVariants(key, a100);
  EXPECT_FALSE(variants.empty());
  EXPECT_EQ(Count(variants, "mma", gemm::kMmaWarpgroup), 0u);
}

TEST(KeySpace, SplitKFollowsTheDevicesSmCount) {
  // 8 tiles of 128x128: a wave of 132 SMs leaves room for 8 splits of k,
  // one of 16 SMs for 2.
  const v1::KernelKey key = KMajorGemm(128, 1024, 8192);
  const auto full = TileGemmVariants(key, kH200);
  const auto slice = TileGemmVariants(key, H200Slice());
  EXPECT_GT(full.size() - Count(full, "split_k", 1), 0u);
  ASSERT_FALSE(slice.empty());
  const gemm::GemmProblem p = gemm::ProblemOf(key);
  for (const Variant& v : slice) {
    if (v.at("split_k") == 1) continue;
    const int64_t tiles = (p.m + v.at("block_m") - 1) / v.at("block_m") *
                          ((p.n + v.at("block_n") - 1) / v.at("block_n"));
    EXPECT_LE(tiles * v.at("split_k"), 16) << VariantString(v);
  }
  EXPECT_NE(full, slice);
}

TEST(KeySpace, SharedMemoryFollowsTheDevice) {
  // An sm_90 device whose driver allows 99 KiB a block.
  DeviceDescription small = kH200;
  small.max_shared_bytes_per_block = 99 * 1024;
  const v1::KernelKey key = KMajorGemm(4096, 4096, 4096);
  const gemm::GemmTarget target = gemm::GemmTargetOn(gemm::kSm90Target, small);
  const auto variants = TileGemmVariants(key, small);
  ASSERT_FALSE(variants.empty());
  for (const Variant& v : variants) {
    EXPECT_LE(gemm::TileGemmLaunchOf(gemm::ProblemOf(key), target, v).shared_bytes, 99 * 1024)
        << VariantString(v);
  }
  EXPECT_NE(variants, TileGemmVariants(key, kH200));
}

// The MI355X's 160 KiB of LDS admits tiles the MI300X's 64 KiB does not
// (64x256 on 4 waves, 80 KiB; 128x256 on 8 waves would fit it too, but not
// the 256 registers a lane of 8 waves gets).
TEST(KeySpace, CdnaTargetsSeeTheirOwnLds) {
  EXPECT_EQ(NamedDeviceOfArch("gfx942"), &kMi300x);
  EXPECT_EQ(NamedDeviceOfArch("gfx950"), &kMi355x);
  EXPECT_EQ(NamedDeviceOfArch("gfx1100"), nullptr);
  const v1::KernelKey key = KMajorGemm(256, 4096, 4096);
  const auto mi300x = TileGemmVariants(key, kMi300x);
  const auto mi355x = TileGemmVariants(key, kMi355x);
  ASSERT_FALSE(mi300x.empty());
  const gemm::GemmProblem p = gemm::ProblemOf(key);
  const gemm::GemmTarget on_mi300x = gemm::GemmTargetOn(gemm::kGfx90aTarget, kMi300x);
  const gemm::GemmTarget on_mi355x = gemm::GemmTargetOn(gemm::kGfx90aTarget, kMi355x);
  int64_t most_lds = 0;
  for (const Variant& v : mi300x) {
    EXPECT_LE(gemm::TileGemmLaunchOf(p, on_mi300x, v).shared_bytes, 64 * 1024) << VariantString(v);
  }
  for (const Variant& v : mi355x) {
    const int64_t lds = gemm::TileGemmLaunchOf(p, on_mi355x, v).shared_bytes;
    EXPECT_LE(lds, 160 * 1024) << VariantString(v);
    most_lds = std::max(most_lds, lds);
  }
  EXPECT_GT(most_lds, 64 * 1024);
}

// Four SIMDs of 512 registers a lane share a block's warps: an NVIDIA
// thread gets its 255 up to 8 warps, a CDNA lane 512 up to 4 waves.
TEST(KeySpace, RegistersPerLaneFollowTheWarpsEachSimdHolds) {
  EXPECT_EQ(RegistersPerLane(kH200, 128), 255);
  EXPECT_EQ(RegistersPerLane(kH200, 256), 255);
  EXPECT_EQ(RegistersPerLane(kH200, 512), 128);
  EXPECT_EQ(RegistersPerLane(kH200, 1024), 64);
  EXPECT_EQ(RegistersPerLane(kMi355x, 64), 512);
  EXPECT_EQ(RegistersPerLane(kMi355x, 256), 512);
  EXPECT_EQ(RegistersPerLane(kMi355x, 320), 256);
  EXPECT_EQ(RegistersPerLane(kMi355x, 512), 256);
  EXPECT_EQ(RegistersPerLane(kMi300x, 1024), 128);
}

TEST(KeySpace, NoServingTemplateIsEmptyAndSaysWhy) {
  std::string why;
  EXPECT_TRUE(KeySpace::Of(Gemm(8, 8, 8, v1::DTYPE_BF16), kHostCpu, &why).empty());
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace tiletune::kernels
