// The tile GEMM templates without compiling: which keys they serve, the
// sources and launches they generate, planted faults and the baseline.
#include <gtest/gtest.h>

#include "kernels/core/kernel_key.h"
#include "kernels/core/kernel_template.h"
#include "kernels/ops/gemm/tile_gemm_source.h"
#include "tests/support/test_key.h"

namespace tiletune::kernels {
namespace {

v1::KernelKey Gemm(int64_t m, int64_t n, int64_t k, v1::DType dtype = v1::DTYPE_BF16) {
  return testing::GemmShapeKey(m, n, k, dtype);
}

void SetBatch(v1::KernelKey& key, int64_t batch) {
  auto* d = key.add_shape();
  d->set_name("batch");
  d->set_size(batch);
}

void SetColMajor(v1::KernelKey& key, const char* tensor) {
  auto* l = key.add_layouts();
  l->set_tensor(tensor);
  l->set_layout(v1::LAYOUT_COL_MAJOR);
}

void AddChain(v1::KernelKey& key, const char* op, v1::DType dtype = v1::DTYPE_UNSPECIFIED) {
  auto* c = key.add_chain();
  c->set_op(op);
  c->set_dtype(dtype);
}

const KernelTemplate& TileGemm(const v1::KernelKey& key, std::string_view backend) {
  std::string why;
  const KernelTemplate* t = FindKernelTemplate(key, backend, &why);
  if (!t) throw std::runtime_error(why);
  return *t;
}

const Variant kBig = {{"block_m", 128},        {"block_n", 256}, {"block_k", 64}, {"warps_m", 2},
                      {"warps_n", 4},          {"warps_k", 1},   {"stages", 3},   {"group_m", 8},
                      {"mma", gemm::kMmaSync}, {"split_k", 1}};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(TileGemmTemplate, ServesBf16AndF16GemmsOnCudaAndHip) {
  for (const char* backend : {"cuda", "hip"}) {
    for (const v1::DType dtype : {v1::DTYPE_BF16, v1::DTYPE_F16}) {
      const KernelTemplate& t = TileGemm(Gemm(64, 64, 64, dtype), backend);
      EXPECT_EQ(t.name(), gemm::kTileGemmName);
      EXPECT_EQ(t.backend(), backend);
    }
    std::string why;
    const KernelTemplate* f32 = FindKernelTemplate(Gemm(64, 64, 64, v1::DTYPE_F32), backend, &why);
    EXPECT_TRUE(f32 == nullptr || f32->name() != gemm::kTileGemmName);
  }
}

// f32 keys allowing tf32: the float-tile variants on CUDA, whose source
// reads floats 16 bytes at a time and whose baseline is cuBLASLt (with
// FAST_TF32, runtime/cuda/cublaslt_gemm_spec.cpp); gfx90a has no xf32 MFMA,
// so HIP keeps gpu_gemm_tiled for them.
TEST(TileGemmTemplate, ServesF32AllowingTf32OnCudaOnly) {
  v1::KernelKey key = Gemm(4096, 4096, 4096, v1::DTYPE_F32);
  key.set_allow_tf32(true);
  const KernelTemplate& cuda = TileGemm(key, "cuda");
  EXPECT_EQ(cuda.name(), gemm::kTileGemmName);
  const auto variants = cuda.Space(key).ValidVariants();
  ASSERT_FALSE(variants.empty());
  const KernelSource source = cuda.Source(key, variants.front());
  EXPECT_TRUE(Contains(source.code, "using a_type = float;")) << source.code;
  EXPECT_TRUE(Contains(source.code, "static constexpr int vec_a = 4;")) << source.code;
  EXPECT_TRUE(Contains(source.code, "tt::gemm::tile_gemm<Config>")) << source.code;
  EXPECT_EQ(cuda.BaselineFor(key).vendor_library, "cublasLt");

  EXPECT_EQ(TileGemm(key, "hip").name(), "gpu_gemm_tiled");
  for (const auto& t : AllKernelTemplates()) {
    if (t->name() == gemm::kTileGemmName && t->backend() == "hip") {
      EXPECT_EQ(t->Unsupported(key),
                "tile_gemm has no tf32 tensor cores on hip (gfx90a MFMA has no xf32)");
    }
  }
}

TEST(TileGemmTemplate, ExplainsTheKeysItCannotServe) {
  EXPECT_EQ(gemm::UnsupportedTileGemm(Gemm(8, 8, 8, v1::DTYPE_F32)),
            "tile_gemm reads f32 inputs as tf32; this key does not allow tf32 (allow_tf32)");
  EXPECT_EQ(gemm::UnsupportedTileGemm(Gemm(8, 8, 8, v1::DTYPE_F64)),
            "tile_gemm takes bf16, f16 or f32 (as tf32) inputs, not f64");

  v1::KernelKey mixed = Gemm(8, 8, 8);
  AddChain(mixed, "bias", v1::DTYPE_BF16);
  AddChain(mixed, "residual_add", v1::DTYPE_F32);
  EXPECT_EQ(gemm::UnsupportedTileGemm(mixed),
            "chain[1] (residual_add) has dtype f32; tile_gemm needs every chain tensor in one "
            "dtype (the first is bf16)");

  v1::KernelKey cast = Gemm(8, 8, 8);
  cast.set_output_dtype(v1::DTYPE_F32);
  AddChain(cast, "cast", v1::DTYPE_F16);
  EXPECT_EQ(gemm::UnsupportedTileGemm(cast),
            "chain[0] (cast) casts to f16 but the output is f32; tile_gemm casts only to the "
            "output dtype");

  v1::KernelKey batched = Gemm(8, 8, 8);
  SetBatch(batched, 70000);
  EXPECT_EQ(gemm::UnsupportedTileGemm(batched), "batch 70000 exceeds the 65535 blocks of grid z");

  v1::KernelKey fine = Gemm(8, 8, 8, v1::DTYPE_F16);
  fine.set_output_dtype(v1::DTYPE_F32);
  AddChain(fine, "bias", v1::DTYPE_F32);
  AddChain(fine, "cast", v1::DTYPE_F32);
  EXPECT_EQ(gemm::UnsupportedTileGemm(fine), std::nullopt);
}

TEST(TileGemmTemplate, SourceCarriesTheVariantAndItsLaunch) {
  v1::KernelKey key = Gemm(4096, 4096, 4096);
  SetColMajor(key, "b");
  for (const char* backend : {"cuda", "hip"}) {
    const bool cuda = std::string(backend) == "cuda";
    const int64_t threads = cuda ? 256 : 512;  // 8 warps of 32 or wavefronts of 64
    const KernelTemplate& t = TileGemm(key, backend);
    if (cuda) {
      EXPECT_EQ(t.Space(key).Violation(kBig), std::nullopt);
    }
    const KernelSource s = t.Source(key, kBig);
    EXPECT_EQ(s.kernel_name, "tile_gemm");
    EXPECT_EQ(s.entry,
              "tiletune_tile_gemm_block_k64_block_m128_block_n256_group_m8_mma0_split_k1_stages3_"
              "warps_k1_warps_m2_warps_n4");
    EXPECT_TRUE(Contains(
        s.code, "TT_KERNEL(" + std::to_string(threads) + ") " + s.entry + "(tt_gemm_args args)"));
    for (const char* line :
         {"using a_type = tt::bf16;", "using out_type = tt::bf16;",
          "static constexpr bool a_col_major = false;", "static constexpr bool b_col_major = true;",
          "static constexpr int block_m = 128;", "static constexpr int stages = 3;",
          "static constexpr int vec_a = 8;", "static constexpr int vec_b = 8;",
          "static constexpr bool out_aligned = true;",
          "static constexpr int shared_bytes = 147456;",
          "tt::gemm::tile_gemm<Config>(args, Epilogue{&args});"}) {
      EXPECT_TRUE(Contains(s.code, line)) << backend << ": " << line << "\n" << s.code;
    }
    EXPECT_EQ(Contains(s.code, "#define TT_HIP 1"), !cuda);
    std::vector<std::string> names;
    for (const auto& [name, text] : s.headers) {
      EXPECT_FALSE(text.empty()) << name;
      names.push_back(name);
    }
    for (const char* header : {"tt/tile.h", "tt/arch/sm80_mma_sync.h", "tt/arch/cdna_mfma.h",
                               "ops/gemm/device/gemm_mma_multistage.h", "tt/epilogue.h",
                               "tt/device.h", "tt/kernel_args.h"}) {
      EXPECT_NE(std::find(names.begin(), names.end(), header), names.end()) << header;
    }
    EXPECT_EQ(s.compile_options, std::vector<std::string>{"-std=c++17"});
    ASSERT_EQ(s.launch.grid_size(), 3);
    ASSERT_EQ(s.launch.block_size(), 3);
    EXPECT_EQ(s.launch.grid(0), 32 * 16);  // 4096/128 x 4096/256 block tiles
    EXPECT_EQ(s.launch.grid(2), 1);
    EXPECT_EQ(s.launch.block(0), threads);
    EXPECT_EQ(s.launch.shared_memory_bytes(), 3 * (128 * 64 + 64 * 256) * 2);
  }
}

TEST(TileGemmTemplate, OddShapesGetNarrowLoadsAndExactGrids) {
  v1::KernelKey key = Gemm(37, 53, 29, v1::DTYPE_F16);
  SetBatch(key, 3);
  SetColMajor(key, "a");
  key.set_output_dtype(v1::DTYPE_F32);
  const KernelTemplate& t = TileGemm(key, "cuda");
  const auto variants = t.Space(key).ValidVariants();
  ASSERT_FALSE(variants.empty());
  const KernelSource s = t.Source(key, variants.front());
  // lda = m = 37 and ldb = n = 53: one element per load; odd ldc: no paired stores.
  EXPECT_TRUE(Contains(s.code, "static constexpr int vec_a = 1;"));
  EXPECT_TRUE(Contains(s.code, "static constexpr int vec_b = 1;"));
  EXPECT_TRUE(Contains(s.code, "static constexpr bool out_aligned = false;"));
  EXPECT_TRUE(Contains(s.code, "using out_type = float;"));
  EXPECT_EQ(s.launch.grid(0), 1);
  EXPECT_EQ(s.launch.grid(1), 1);
  EXPECT_EQ(s.launch.grid(2), 3);

  // m = 16, n = 14336: one row of 16-row tiles.
  v1::KernelKey decode = Gemm(16, 14336, 4096);
  SetColMajor(decode, "b");
  for (const Variant& v : t.Space(decode).ValidVariants()) {
    const KernelSource d = t.Source(decode, v);
    EXPECT_EQ(d.launch.grid(0), 14336 / v.at("block_n")) << VariantString(v);
    EXPECT_EQ(d.launch.block(0), 32 * v.at("warps_n") * v.at("warps_k")) << VariantString(v);
  }
}

TEST(TileGemmTemplate, FusesTheEpilogueChainInOrder) {
  v1::KernelKey key = Gemm(256, 256, 256);
  AddChain(key, "bias");
  AddChain(key, "scale");
  AddChain(key, "gelu_tanh");
  AddChain(key, "residual_add");
  AddChain(key, "cast", v1::DTYPE_BF16);
  const KernelSource s =
      TileGemm(key, "cuda").Source(key, TileGemm(key, "cuda").Space(key).ValidVariants().front());
  EXPECT_TRUE(Contains(s.code, "#define TT_CHAIN_TENSOR_T tt::bf16"));
  size_t at = 0;
  for (const char* step :
       {"tt::bias{args->chain.tensors[0]}", "tt::scale{args->chain.scalars[1]}", "tt::gelu_tanh{}",
        "tt::residual_add{args->chain.tensors[3]}", "tt::cast_f32{}"}) {
    const size_t found = s.code.find(step, at);
    ASSERT_NE(found, std::string::npos) << step << "\n" << s.code;
    at = found;
  }
}

// The same tile with wgmma: two warpgroups of 64 rows, the sm_90a header and
// target, one swizzle atom of alignment slack; not offered on HIP.
TEST(TileGemmTemplate, WgmmaVariantAsksForSm90a) {
  v1::KernelKey key = Gemm(4096, 4096, 4096);
  SetColMajor(key, "b");
  Variant v = kBig;
  v["mma"] = gemm::kMmaWarpgroup;
  v["stages"] = 4;
  const KernelTemplate& t = TileGemm(key, "cuda");
  EXPECT_EQ(t.Space(key).Violation(v), std::nullopt);
  const KernelSource s = t.Source(key, v);
  for (const char* line : {"#include \"ops/gemm/device/gemm_sm90a_wgmma.h\"",
                           "tt::gemm::wgmma_gemm<Config>(args, Epilogue{&args});",
                           "static constexpr int shared_bytes = 197632;", "TT_KERNEL(256) "}) {
    EXPECT_TRUE(Contains(s.code, line)) << line << "\n" << s.code;
  }
  EXPECT_EQ(s.compile_options,
            (std::vector<std::string>{"-std=c++17", "--tiletune-arch-specific"}));
  EXPECT_EQ(s.launch.shared_memory_bytes(), 4 * (128 + 256) * 64 * 2 + 1024);
  EXPECT_EQ(TileGemm(key, "hip").Space(key).Violation(v),
            "mma=wgmma: the target has warpgroup MMA (sm_90a)");
  // Row-major B is not K-major: the mma.sync path serves it.
  v1::KernelKey row_b = Gemm(4096, 4096, 4096);
  EXPECT_EQ(TileGemm(row_b, "cuda").Space(row_b).Violation(v),
            "mma=wgmma: A row-major and B column-major (K-major operands)");
}

// GELU(tanh) takes the leaf's one-instruction tanh only where a 16-bit
// store rounds away its error; f32 outputs keep tanhf.
TEST(TileGemmTemplate, FastTanhOnlyForSixteenBitOutputs) {
  for (const v1::DType out : {v1::DTYPE_BF16, v1::DTYPE_F16, v1::DTYPE_F32}) {
    v1::KernelKey key = Gemm(256, 256, 256);
    key.set_output_dtype(out);
    AddChain(key, "gelu_tanh");
    const KernelTemplate& t = TileGemm(key, "cuda");
    const KernelSource s = t.Source(key, t.Space(key).ValidVariants().front());
    EXPECT_EQ(Contains(s.code, "#define TT_APPROX_TANH 1"), out != v1::DTYPE_F32) << out;
  }
}

TEST(TileGemmTemplate, PlantsFaultsOnRequest) {
  const v1::KernelKey key = Gemm(256, 256, 256);
  const KernelTemplate& t = TileGemm(key, "cuda");
  Variant v = t.Space(key).ValidVariants().front();
  const KernelSource clean = t.Source(key, v);
  const std::pair<int64_t, const char*> faults[] = {
      {1, "while (tt_release == 0)"}, {2, "[1LL << 40] = 1.0f"}, {3, "v += 1.0f;"}};
  for (const auto& [fault, mark] : faults) {
    v[std::string(kernels::kPlantedFault)] = fault;
    const KernelSource s = t.Source(key, v);
    EXPECT_TRUE(Contains(s.code, mark)) << fault;
    EXPECT_FALSE(Contains(clean.code, mark)) << fault;
    EXPECT_NE(s.entry, clean.entry) << fault;
  }
  v[std::string(kernels::kPlantedFault)] = 4;
  EXPECT_THROW(t.Source(key, v), std::invalid_argument);
  v.erase(std::string(kernels::kPlantedFault));
  v.erase("stages");
  EXPECT_THROW(t.Source(key, v), std::invalid_argument);
}

TEST(TileGemmTemplate, HipBaselineIsTheNaiveGemm) {
  v1::KernelKey key = Gemm(37, 53, 29);
  SetBatch(key, 2);
  AddChain(key, "relu");
  const Baseline baseline = TileGemm(key, "hip").BaselineFor(key);
  EXPECT_EQ(baseline.name, gemm::kNaiveGemmName);
  EXPECT_TRUE(baseline.vendor_library.empty());
  ASSERT_TRUE(baseline.source.has_value());
  const KernelSource& s = *baseline.source;
  EXPECT_TRUE(Contains(s.code, "tt::gemm::naive_gemm<Config>(args, Epilogue{&args});"));
  EXPECT_TRUE(Contains(s.code, "tt::relu{}"));
  EXPECT_EQ(s.launch.grid(0), 3 * 4);  // ceil(37/16) x ceil(53/16)
  EXPECT_EQ(s.launch.grid(2), 2);
  EXPECT_EQ(s.launch.block(0), 16);
  EXPECT_EQ(s.launch.block(1), 16);
  EXPECT_EQ(s.launch.shared_memory_bytes(), 0);
}

TEST(TileGemmTemplate, CudaBaselineOfAPlainGemmIsTheCublasLtCallAlone) {
  const v1::KernelKey key = Gemm(37, 53, 29);
  const Baseline baseline = TileGemm(key, "cuda").BaselineFor(key);
  EXPECT_EQ(baseline.name, "cublasLt");
  EXPECT_EQ(baseline.vendor_library, "cublasLt");
  EXPECT_TRUE(baseline.vendor_call_suffices);
  EXPECT_FALSE(baseline.source.has_value());
}

TEST(TileGemmTemplate, CudaBaselineRunsCublasLtsOwnEpilogueBesideThePassWhereItFits) {
  v1::KernelKey key = Gemm(37, 53, 29);
  SetBatch(key, 2);
  AddChain(key, "bias");
  AddChain(key, "relu");
  const Baseline baseline = TileGemm(key, "cuda").BaselineFor(key);
  EXPECT_EQ(baseline.name, "cublasLt+gemm_epilogue_pass");
  EXPECT_EQ(baseline.vendor_library, "cublasLt");
  EXPECT_TRUE(baseline.vendor_call_suffices);
  ASSERT_TRUE(baseline.source.has_value());
  EXPECT_TRUE(Contains(baseline.source->code, "tt::relu{}"));
}

TEST(TileGemmTemplate, CudaBaselineAddsTheEpiloguePassWhereCublasLtCannot) {
  v1::KernelKey key = Gemm(37, 53, 29);
  SetBatch(key, 2);
  AddChain(key, "bias");
  AddChain(key, "gelu_erf");
  AddChain(key, "residual_add");
  const Baseline baseline = TileGemm(key, "cuda").BaselineFor(key);
  EXPECT_EQ(baseline.name, "cublasLt+gemm_epilogue_pass");
  EXPECT_EQ(baseline.vendor_library, "cublasLt");
  EXPECT_FALSE(baseline.vendor_call_suffices);
  ASSERT_TRUE(baseline.source.has_value());
  const KernelSource& s = *baseline.source;
  EXPECT_TRUE(Contains(s.code, "tt::gemm::epilogue_pass<Config>(args, Epilogue{&args});"));
  // The pass applies the whole chain, in order.
  EXPECT_TRUE(Contains(s.code, "tt::bias{args->chain.tensors[0]}"));
  EXPECT_TRUE(Contains(s.code, "tt::gelu_erf{}"));
  EXPECT_TRUE(Contains(s.code, "tt::residual_add{args->chain.tensors[2]}"));
  // 2 x 37 x 53 outputs, 256 threads striding over them.
  EXPECT_EQ(s.launch.grid(0), (2 * 37 * 53 + 255) / 256);
  EXPECT_EQ(s.launch.grid(2), 1);
  EXPECT_EQ(s.launch.block(0), 256);
  // 53 columns: one output per load.
  EXPECT_TRUE(Contains(s.code, "static constexpr int vec = 1;"));
}

TEST(TileGemmTemplate, EpiloguePassMovesSixteenByteVectorsWhereRowsAllowThem) {
  struct Case {
    v1::DType out;
    int64_t n, vec;
  };
  // 16 bytes: 8 bf16 or 4 f32 outputs; fewer where the row length needs it.
  for (const Case& c : {Case{v1::DTYPE_BF16, 14336, 8}, Case{v1::DTYPE_F32, 14336, 4},
                        Case{v1::DTYPE_BF16, 36, 4}, Case{v1::DTYPE_BF16, 38, 2}}) {
    v1::KernelKey key = Gemm(128, c.n, 64);
    key.set_output_dtype(c.out);
    AddChain(key, "bias", c.out);
    AddChain(key, "gelu_erf");
    const Baseline baseline = TileGemm(key, "cuda").BaselineFor(key);
    ASSERT_TRUE(baseline.source.has_value());
    const KernelSource& s = *baseline.source;
    SCOPED_TRACE(s.code);
    EXPECT_TRUE(Contains(s.code, "static constexpr int vec = " + std::to_string(c.vec) + ";"));
    // Capped at 8192 blocks of 256 threads, each striding over vectors.
    EXPECT_EQ(s.launch.grid(0), std::min<int64_t>(8192, (128 * c.n / c.vec + 255) / 256));
  }
}

}  // namespace
}  // namespace tiletune::kernels
