// The GPU kernel templates without a compiler or a GPU: catalog lookup,
// search spaces and their constraints, launch geometry and generated
// sources. (Every variant compiling is gpu_kernel_compile_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "kernels/core/kernel_key.h"
#include "kernels/core/kernel_template.h"
#include "kernels/source/host_source.h"
#include "tests/support/source_text.h"
#include "tests/support/test_key.h"

namespace tiletune::kernels {
namespace {

// Keys as a client writes them (tests/support/test_key.h).
const auto Key = [](const std::string& op, const std::vector<std::pair<std::string, int64_t>>& dims,
                    const std::vector<std::string>& chain = {}) {
  return testing::TestKey(op, dims, chain);
};
const auto Rows = [](const std::string& op, int64_t rows, int64_t cols) {
  return testing::RowsTestKey(op, rows, cols);
};
const auto Gemm = [](int64_t m, int64_t n, int64_t k) { return testing::GemmShapeKey(m, n, k); };

// This file's template by name: other GPU templates may serve some of the
// same keys (FindKernelTemplate answers with the first that does).
const KernelTemplate& Gpu(std::string_view name, const std::string& backend) {
  for (const auto& t : AllKernelTemplates()) {
    if (t->name() == name && t->backend() == backend) return *t;
  }
  throw std::runtime_error("no template " + std::string(name) + " for " + backend);
}

const KernelTemplate& Find(const v1::KernelKey& key, const std::string& backend) {
  return Gpu(key.op() == "gemm" ? "gpu_gemm_tiled" : "gpu_" + key.op() + "_rows", backend);
}

int64_t WarpSize(const std::string& backend) {
  return backend == "hip" ? 64 : 32;
}

class GpuTemplates : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(Vendors, GpuTemplates, ::testing::Values("cuda", "hip"),
                         [](const auto& test) { return test.param; });

TEST_P(GpuTemplates, ServeEveryOp) {
  const std::pair<const char*, const char*> expected[] = {{"gemm", "gpu_gemm_tiled"},
                                                          {"softmax", "gpu_softmax_rows"},
                                                          {"rmsnorm", "gpu_rmsnorm_rows"},
                                                          {"layernorm", "gpu_layernorm_rows"}};
  for (const auto& [op, name] : expected) {
    const v1::KernelKey key = std::string(op) == "gemm" ? Gemm(4, 4, 4) : Rows(op, 4, 4);
    std::string why;
    const KernelTemplate* t = FindKernelTemplate(key, GetParam(), &why);
    ASSERT_TRUE(t) << why;
    EXPECT_EQ(t->name(), name);
    EXPECT_EQ(t->backend(), GetParam());
  }
}

TEST_P(GpuTemplates, RowKernelsServeF32Bf16AndF16AndSayWhyNot) {
  for (const v1::DType dtype : {v1::DTYPE_F32, v1::DTYPE_BF16, v1::DTYPE_F16}) {
    v1::KernelKey key = Rows("rmsnorm", 4, 4);
    key.set_input_dtype(dtype);
    key.set_output_dtype(dtype);
    key.add_prologue()->set_op("residual_add");
    key.add_chain()->set_op("bias");
    EXPECT_EQ(Find(key, GetParam()).Unsupported(key), std::nullopt) << CanonicalKeyString(key);
  }

  v1::KernelKey f64 = Rows("softmax", 4, 4);
  f64.set_input_dtype(v1::DTYPE_F64);
  EXPECT_EQ(Find(f64, GetParam()).Unsupported(f64),
            "GPU kernels take f32, bf16 or f16 inputs, not f64");

  // Prologue tensors default to the input type, chain tensors to the output
  // type: bf16 in, f32 out leaves two tensor types, which one kernel cannot read.
  v1::KernelKey mixed = Rows("rmsnorm", 4, 4);
  mixed.set_input_dtype(v1::DTYPE_BF16);
  mixed.set_output_dtype(v1::DTYPE_F32);
  mixed.add_prologue()->set_op("residual_add");
  mixed.add_chain()->set_op("residual_add");
  EXPECT_EQ(Find(mixed, GetParam()).Unsupported(mixed),
            "chain[0] (residual_add) has dtype f32 but prologue[0] has bf16; a GPU kernel reads "
            "every prologue and chain tensor in one dtype");

  v1::KernelKey cast = Rows("rmsnorm", 4, 4);
  cast.add_chain()->set_op("cast");
  cast.mutable_chain(0)->set_dtype(v1::DTYPE_F16);
  const auto why_cast = Find(cast, GetParam()).Unsupported(cast);
  ASSERT_TRUE(why_cast);
  EXPECT_NE(why_cast->find("chain[0] (cast) casts to f16 but the output is f32"), std::string::npos)
      << *why_cast;
  // A cast to the output type is the store's own rounding.
  cast.mutable_chain(0)->set_dtype(v1::DTYPE_F32);
  EXPECT_FALSE(Find(cast, GetParam()).Unsupported(cast));

  EXPECT_EQ(Find(cast, GetParam()).Unsupported(Gemm(4, 4, 4)),
            "gpu_rmsnorm_rows serves rmsnorm, not gemm");
}

TEST_P(GpuTemplates, TheF32GemmLeaves16BitTypesToTileGemm) {
  v1::KernelKey half = Gemm(64, 64, 64);
  half.set_input_dtype(v1::DTYPE_F16);
  EXPECT_EQ(Gpu("gpu_gemm_tiled", GetParam()).Unsupported(half),
            "gpu_gemm_tiled reads and writes f32, not f16 -> f16 (tile_gemm serves bf16 and f16)");
}

TEST_P(GpuTemplates, SixteenBitRowsLoadUpToEightElementsAtOnce) {
  v1::KernelKey key = Rows("softmax", 37, 1000);
  key.set_input_dtype(v1::DTYPE_BF16);
  std::set<int64_t> vecs;
  for (const auto& v : Find(key, GetParam()).Space(key).ValidVariants()) vecs.insert(v.at("vec"));
  EXPECT_EQ(vecs, (std::set<int64_t>{1, 2, 4, 8}));
  const KernelSource source =
      Find(key, GetParam()).Source(key, Find(key, GetParam()).Space(key).ValidVariants().at(0));
  EXPECT_NE(source.code.find("using x_type = tt::bf16;"), std::string::npos) << source.code;
  EXPECT_NE(source.code.find("using y_type = tt::bf16;"), std::string::npos) << source.code;
}

// rows=37, cols=1000: cols is a multiple of 4, 37 rows leave the last block
// partly empty.
TEST_P(GpuTemplates, RowSpaceFollowsTheShape) {
  const int64_t warp = WarpSize(GetParam());
  const v1::KernelKey key = Rows("softmax", 37, 1000);
  const KernelTemplate& t = Find(key, GetParam());
  const auto variants = t.Space(key).ValidVariants();
  EXPECT_EQ(variants.size(), GetParam() == "cuda" ? 25u : 29u);
  std::set<int64_t> vecs, rows_per_block;
  for (const auto& v : variants) {
    const int64_t threads = v.at("threads"), per_row = threads / v.at("rows_per_block");
    EXPECT_EQ(threads % warp, 0) << VariantString(v);
    EXPECT_LE(threads, 1024) << VariantString(v);
    EXPECT_EQ(per_row % warp, 0) << VariantString(v);
    // One pass: the row fits in the group's registers, or each thread holds
    // the most. Multi-pass: the row takes several chunks.
    const int64_t chunk = per_row * v.at("vec") * v.at("unroll");
    if (v.at("one_pass") == 1) {
      EXPECT_TRUE(chunk >= 1000 || v.at("unroll") == 8) << VariantString(v);
    } else {
      EXPECT_LT(chunk, 1000) << VariantString(v);
    }
    EXPECT_EQ(v.at("persistent"), 0) << "37 rows: no persistent grid, " << VariantString(v);
    vecs.insert(v.at("vec"));
    rows_per_block.insert(v.at("rows_per_block"));
  }
  EXPECT_EQ(vecs, (std::set<int64_t>{1, 2, 4}));
  EXPECT_EQ(rows_per_block, (std::set<int64_t>{1, 2, 4}));

  // An odd row length allows no vector loads.
  for (const auto& v : t.Space(Rows("softmax", 37, 1001)).ValidVariants()) {
    EXPECT_EQ(v.at("vec"), 1) << VariantString(v);
  }
  // A tiny problem still has its one variant: the smallest block.
  const auto tiny = t.Space(Rows("softmax", 1, 3)).ValidVariants();
  ASSERT_EQ(tiny.size(), 1u);
  EXPECT_EQ(tiny[0], (Variant{{"threads", 64},
                              {"rows_per_block", 1},
                              {"vec", 1},
                              {"unroll", 1},
                              {"one_pass", 1},
                              {"persistent", 0}}));
}

TEST_P(GpuTemplates, RowSpaceNamesTheBrokenRule) {
  const std::string w = std::to_string(WarpSize(GetParam()));
  const v1::KernelKey key = Rows("rmsnorm", 37, 1000);
  const SearchSpace space = Find(key, GetParam()).Space(key);
  // threads, rows_per_block, vec, unroll; one pass, no persistent grid.
  const auto variant = [](int64_t threads, int64_t rows_per_block, int64_t vec, int64_t unroll) {
    return Variant{{"threads", threads}, {"rows_per_block", rows_per_block},
                   {"vec", vec},         {"unroll", unroll},
                   {"one_pass", 1},      {"persistent", 0}};
  };
  EXPECT_EQ(space.Violation(variant(256, 1, 4, 2)),
            "one_pass: unroll is the fewest vectors per thread that hold the row (at most 8, and "
            "16384 floats per block), the rest of a longer row waits in shared memory");
  EXPECT_EQ(space.Violation(variant(1024, 2, 4, 1)),
            "several rows per block get one warp each: threads = rows_per_block * " + w);
  EXPECT_EQ(space.Violation(variant(1024, 1, 4, 1)),
            "no warp of a row is idle: threads per row * vec <= cols rounded up to " + w +
                " * vec (or the smallest block, 64 threads)");
  Variant multi_pass = variant(256, 1, 4, 1);
  multi_pass["one_pass"] = 0;  // 1024 columns a chunk: the row is one chunk
  EXPECT_EQ(space.Violation(multi_pass),
            "multi-pass: the largest unroll that takes several chunks per row (half the one-pass "
            "unroll where that holds the row)");
  Variant persistent = variant(256, 1, 4, 1);
  persistent["persistent"] = 2;
  EXPECT_EQ(space.Violation(persistent), "a persistent grid only for more than 1024 row groups");
  const v1::KernelKey odd = Rows("rmsnorm", 37, 1002);
  EXPECT_EQ(Find(odd, GetParam()).Space(odd).Violation(variant(256, 1, 4, 1)),
            "vec divides cols (vector loads stay aligned)");
  const v1::KernelKey one_row = Rows("rmsnorm", 1, 128);
  EXPECT_EQ(Find(one_row, GetParam()).Space(one_row).Violation(variant(128, 2, 1, 1)),
            "rows_per_block <= rows");
}

TEST_P(GpuTemplates, LayernormTriesWelfordOnlyOnLongRows) {
  const v1::KernelKey short_rows = Rows("layernorm", 37, 1000);
  const KernelTemplate& t = Find(short_rows, GetParam());
  for (const auto& v : t.Space(short_rows).ValidVariants()) {
    const int64_t per_row = v.at("threads") / v.at("rows_per_block");
    EXPECT_TRUE(v.at("welford") == 0 || 1000 > per_row * v.at("vec") * v.at("unroll"))
        << VariantString(v);
    EXPECT_TRUE(v.at("welford") == 0 || v.at("one_pass") == 0) << VariantString(v);
  }
  // Multi-pass with and without Welford; on CUDA also one pass through
  // shared memory (200 KB rows do not fit CDNA's 64 KiB).
  const v1::KernelKey long_rows = Rows("layernorm", 3, 50000);
  const auto variants = t.Space(long_rows).ValidVariants();
  EXPECT_EQ(variants.size(), GetParam() == "cuda" ? 42u : 30u);
  EXPECT_EQ(std::count_if(variants.begin(), variants.end(),
                          [](const Variant& v) { return v.at("welford") == 1; }),
            15);
}

// Rows that fit in registers: one pass keeps them there, multi-pass walks
// them in smaller chunks. Rows that do not: one pass keeps them in shared
// memory where the vendor's blocks have enough, multi-pass reads each pass.
TEST_P(GpuTemplates, RowKernelsOfferOnePassAndMultiPass) {
  const std::string vendor = GetParam();
  for (const char* op : {"softmax", "rmsnorm", "layernorm"}) {
    // Where each variant keeps its row between passes.
    const auto kinds = [&](const v1::KernelKey& key) {
      const int64_t cols = *DimSize(key, "cols");
      const KernelTemplate& t = Find(key, vendor);
      std::set<std::string> seen;
      for (const auto& v : t.Space(key).ValidVariants()) {
        const KernelSource s = t.Source(key, v);
        const int64_t chunk =
            v.at("threads") / v.at("rows_per_block") * v.at("vec") * v.at("unroll");
        EXPECT_NE(
            s.code.find("static constexpr int one_pass = " + std::to_string(v.at("one_pass"))),
            std::string::npos);
        if (v.at("one_pass") == 0) {
          EXPECT_LT(chunk, cols) << VariantString(v);
          EXPECT_EQ(s.launch.shared_memory_bytes(), 0) << VariantString(v);
          seen.insert("multi-pass");
        } else if (chunk >= cols) {
          EXPECT_EQ(s.launch.shared_memory_bytes(), 0) << VariantString(v);
          seen.insert("registers");
        } else {
          EXPECT_EQ(s.launch.shared_memory_bytes(), v.at("rows_per_block") * cols * 4)
              << VariantString(v);
          seen.insert("shared");
        }
      }
      return seen;
    };
    EXPECT_EQ(kinds(Rows(op, 64, 4096)),
              (std::set<std::string>{"multi-pass", "registers", "shared"}))
        << op;
    // 128 KiB rows fit an sm_90 block's shared memory, not a CDNA block's 64 KiB.
    const std::set<std::string> wide = vendor == "cuda"
                                           ? std::set<std::string>{"multi-pass", "shared"}
                                           : std::set<std::string>{"multi-pass"};
    EXPECT_EQ(kinds(Rows(op, 64, 32768)), wide) << op;
  }
}

// Many rows: persistent grids of 1, 2 and 4 blocks per SM/CU, sized at
// launch; the code is that of the full grid.
TEST_P(GpuTemplates, ManyRowsOfferAPersistentGridSizedAtLaunch) {
  const v1::KernelKey key = Rows("rmsnorm", 16384, 4096);
  const KernelTemplate& t = Find(key, GetParam());
  std::set<int64_t> grids;
  for (const auto& v : t.Space(key).ValidVariants()) {
    grids.insert(v.at("persistent"));
    if (v.at("persistent") == 0) continue;
    Variant full = v;
    full["persistent"] = 0;
    const KernelSource persistent = t.Source(key, v), plain = t.Source(key, full);
    EXPECT_EQ(persistent.launch.blocks_per_compute_unit(), v.at("persistent"));
    EXPECT_EQ(plain.launch.blocks_per_compute_unit(), 0);
    EXPECT_EQ(persistent.launch.grid(0), plain.launch.grid(0));
    EXPECT_EQ(persistent.entry, plain.entry);
    EXPECT_EQ(persistent.code, plain.code);
  }
  EXPECT_EQ(grids, (std::set<int64_t>{0, 1, 2, 4}));
}

TEST_P(GpuTemplates, RowLaunchCoversEveryRow) {
  const v1::KernelKey key = Rows("layernorm", 37, 1000);
  const KernelTemplate& t = Find(key, GetParam());
  for (const auto& v : t.Space(key).ValidVariants()) {
    const KernelSource s = t.Source(key, v);
    ASSERT_EQ(s.launch.grid_size(), 3);
    ASSERT_EQ(s.launch.block_size(), 3);
    const int64_t per_block = v.at("rows_per_block");
    EXPECT_EQ(s.launch.grid(0), (37 + per_block - 1) / per_block) << VariantString(v);
    EXPECT_EQ(s.launch.block(0), v.at("threads"));
    EXPECT_EQ(s.launch.grid(1) * s.launch.grid(2) * s.launch.block(1) * s.launch.block(2), 1);
    const int64_t chunk = v.at("threads") / per_block * v.at("vec") * v.at("unroll");
    EXPECT_EQ(s.launch.shared_memory_bytes(),
              v.at("one_pass") == 1 && chunk < 1000 ? per_block * 1000 * 4 : 0)
        << VariantString(v);
    EXPECT_NE(s.code.find("TT_KERNEL(" + std::to_string(v.at("threads")) + ") " + s.entry +
                          "(tt_layernorm_args args)"),
              std::string::npos)
        << s.code;
  }
}

// gemm 37x53x29: no dimension a multiple of a tile.
TEST_P(GpuTemplates, GemmSpaceFollowsTheShape) {
  const int64_t warp = WarpSize(GetParam());
  const v1::KernelKey odd = Gemm(37, 53, 29);
  const KernelTemplate& t = Find(odd, GetParam());
  const auto small = t.Space(odd).ValidVariants();
  EXPECT_EQ(small.size(), 16u);  // 4 tiles up to 64x64, 2 depths, double buffer or not
  const auto big = t.Space(Gemm(1024, 1024, 1024)).ValidVariants();
  EXPECT_EQ(big.size(), 28u);
  std::set<std::pair<int64_t, int64_t>> tiles;
  for (const auto& v : big) {
    const int64_t threads = (v.at("tile_m") / v.at("micro_m")) * (v.at("tile_n") / v.at("micro_n"));
    EXPECT_EQ(threads % warp, 0) << VariantString(v);
    EXPECT_LE(threads, 256) << VariantString(v);
    const int64_t stages = v.at("double_buffer") + 1;
    EXPECT_LE(stages * v.at("tile_k") * (v.at("tile_m") + v.at("tile_n") + 8) * 4, 48 * 1024);
    tiles.insert({v.at("tile_m"), v.at("tile_n")});
  }
  EXPECT_EQ(tiles.size(), 7u);
  for (const auto& v : small) {
    EXPECT_LE(v.at("tile_m"), 64) << VariantString(v);
    EXPECT_LE(v.at("tile_n"), 64) << VariantString(v);
  }
  const SearchSpace space = t.Space(odd);
  const auto variant = [](int64_t tm, int64_t tn, int64_t tk, int64_t mm, int64_t mn) {
    return Variant{{"tile_m", tm},  {"tile_n", tn},  {"tile_k", tk},
                   {"micro_m", mm}, {"micro_n", mn}, {"double_buffer", 1}};
  };
  EXPECT_EQ(space.Violation(variant(32, 32, 8, 8, 8)),
            "threads ((tile_m/micro_m)*(tile_n/micro_n)) are a multiple of " +
                std::to_string(warp) + ", at most 1024");
  EXPECT_EQ(space.Violation(variant(64, 64, 8, 4, 8)), "square thread tile (micro_m = micro_n)");
  EXPECT_EQ(space.Violation(variant(128, 32, 8, 8, 8)), "tile_m and tile_n within a factor of 2");
  EXPECT_EQ(space.Violation(variant(64, 64, 8, 8, 8)),
            "4x4 thread tiles on tiles up to 64x64, 8x8 on tiles with a side of 128");
  EXPECT_EQ(space.Violation(variant(128, 64, 8, 8, 8)), "tile_m <= m rounded up to 32");
  EXPECT_EQ(t.Space(Gemm(37, 53, 5)).Violation(variant(32, 32, 16, 4, 4)),
            "tile_k <= k rounded up to 8");
  EXPECT_EQ(t.Space(Gemm(64, 64, int64_t{1} << 24)).Violation(variant(64, 64, 8, 4, 4)),
            "m, n and k below 2^24 (32-bit offsets inside a tile)");
}

TEST_P(GpuTemplates, GemmLaunchCoversEveryTileOfEveryBatch) {
  v1::KernelKey key = Gemm(37, 53, 29);
  auto* batch = key.add_shape();
  batch->set_name("batch");
  batch->set_size(3);
  const KernelTemplate& t = Find(key, GetParam());
  const Variant v{{"tile_m", 32}, {"tile_n", 64}, {"tile_k", 16},
                  {"micro_m", 4}, {"micro_n", 4}, {"double_buffer", 0}};
  ASSERT_FALSE(t.Space(key).Violation(v));
  const KernelSource s = t.Source(key, v);
  EXPECT_EQ(s.launch.grid(0), 3 * 2 * 1);  // batches x ceil(37/32) x ceil(53/64)
  EXPECT_EQ(s.launch.block(0), 8 * 16);
  EXPECT_NE(s.code.find("static constexpr int tile_m = 32;"), std::string::npos);
  EXPECT_NE(s.code.find("static constexpr int a_col_major = 0;"), std::string::npos);

  auto* layout = key.add_layouts();
  layout->set_tensor("b");
  layout->set_layout(v1::LAYOUT_COL_MAJOR);
  EXPECT_NE(t.Source(key, v).code.find("static constexpr int b_col_major = 1;"), std::string::npos);
}

TEST_P(GpuTemplates, SourcesChainTheEpilogueInKeyOrder) {
  const v1::KernelKey key = Key("gemm", {{"m", 37}, {"n", 53}, {"k", 29}},
                                {"bias", "gelu_tanh", "residual_add", "scale"});
  const KernelTemplate& t = Find(key, GetParam());
  const KernelSource s = t.Source(key, t.Space(key).ValidVariants().front());
  EXPECT_EQ(s.kernel_name, "gpu_gemm_tiled");
  EXPECT_NE(s.code.find("__device__ float operator()(float v, long long idx, long long col)"),
            std::string::npos)
      << s.code;
  testing::ExpectInOrder(
      s.code, {"tt::bias{args->chain.tensors[0]}", "tt::gelu_tanh{}",
               "tt::residual_add{args->chain.tensors[2]}", "tt::scale{args->chain.scalars[3]}"});
  EXPECT_NE(s.code.find("tt::gemm_tiled<Config>(args, Epilogue{&args});"), std::string::npos);
  // Only HIP sources select the HIP side of tt/device.h.
  EXPECT_EQ(s.code.find("#define TT_HIP 1") != std::string::npos, GetParam() == "hip");

  std::set<std::string> headers;
  for (const auto& [name, text] : s.headers) {
    EXPECT_FALSE(text.empty()) << name;
    headers.insert(name);
  }
  for (const char* name : {"tt/device.h", "tt/kernel_args.h", "tt/epilogue.h", "tt/tile.h",
                           "tt/typed_memory.h", "ops/gemm/device/gemm_simt.h"}) {
    EXPECT_TRUE(headers.contains(name)) << name;
  }
}

TEST_P(GpuTemplates, EveryVariantHasItsOwnEntry) {
  for (const auto& key : {Gemm(200, 300, 100), Rows("layernorm", 3, 50000)}) {
    const KernelTemplate& t = Find(key, GetParam());
    std::set<std::string> entries;
    const auto variants = t.Space(key).ValidVariants();
    for (const auto& v : variants) entries.insert(t.Source(key, v).entry);
    EXPECT_EQ(entries.size(), variants.size()) << key.op();
    for (const auto& entry : entries) {
      EXPECT_EQ(entry.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"), std::string::npos)
          << entry;
    }
  }
}

TEST_P(GpuTemplates, BaselinesAreTheNaiveKernelsButCublasLtForCudaGemms) {
  const std::string vendor = GetParam();
  const v1::KernelKey softmax = Rows("softmax", 37, 1000);
  const Baseline rows = Find(softmax, vendor).BaselineFor(softmax);
  EXPECT_EQ(rows.name, vendor + "-naive");
  ASSERT_TRUE(rows.source);
  EXPECT_NE(rows.source->code.find("tt::softmax_naive<Config>"), std::string::npos);
  EXPECT_EQ(rows.source->launch.grid(0), 37);  // one block per row
  EXPECT_EQ(rows.source->launch.block(0), 256);

  const v1::KernelKey gemm = Gemm(37, 53, 29);
  const Baseline naive_gemm = Find(gemm, vendor).BaselineFor(gemm);
  // Attention's baseline is a straightforward kernel on every GPU: it does
  // not stand for torch's SDPA, so nothing beating it is served.
  v1::KernelKey attention =
      Key("attention",
          {{"q_heads", 4}, {"kv_heads", 2}, {"q_len", 33}, {"kv_len", 77}, {"head_dim", 64}});
  attention.set_input_dtype(v1::DTYPE_BF16);
  attention.set_output_dtype(v1::DTYPE_BF16);
  std::string why;
  const KernelTemplate* flash = FindKernelTemplate(attention, vendor, &why);
  ASSERT_TRUE(flash) << why;
  EXPECT_NE(flash->BaselineFor(attention).vendor_gap.find("SDPA"), std::string::npos);
  EXPECT_TRUE(rows.vendor_gap.empty());
  if (vendor == "cuda") {
    EXPECT_EQ(naive_gemm.name, "cublasLt");
    EXPECT_EQ(naive_gemm.vendor_library, "cublasLt");
    EXPECT_FALSE(naive_gemm.source);
    EXPECT_TRUE(naive_gemm.vendor_gap.empty());
    return;
  }
  // AMD's GEMM libraries are not packaged for Debian 12.
  EXPECT_NE(naive_gemm.vendor_gap.find("hipBLASLt"), std::string::npos);
  EXPECT_EQ(naive_gemm.name, vendor + "-naive-gemm");
  ASSERT_TRUE(naive_gemm.source);
  EXPECT_NE(naive_gemm.source->code.find("tt::gemm_naive<Config>"), std::string::npos);
  EXPECT_EQ(naive_gemm.source->launch.grid(0), (37 * 53 + 255) / 256);  // a thread per output
}

TEST_P(GpuTemplates, PlantFaultsOnlyOnRequest) {
  const v1::KernelKey key = Rows("rmsnorm", 4, 8);
  const KernelTemplate& t = Find(key, GetParam());
  Variant v = t.Space(key).ValidVariants().front();
  const KernelSource clean = t.Source(key, v);
  EXPECT_EQ(clean.code.find("planted fault"), std::string::npos);
  const char* marks[] = {"", "while (tt_release == 0)", "[1LL << 40] = 1.0f;", "v += 1.0f;"};
  for (int fault : {1, 2, 3}) {
    v[std::string(kPlantedFault)] = fault;
    const KernelSource planted = t.Source(key, v);
    EXPECT_NE(planted.code.find("planted fault"), std::string::npos) << fault;
    EXPECT_NE(planted.code.find(marks[fault]), std::string::npos) << planted.code;
    EXPECT_NE(planted.entry, clean.entry);
  }
  v[std::string(kPlantedFault)] = 4;
  EXPECT_THROW(t.Source(key, v), std::invalid_argument);
}

TEST_P(GpuTemplates, MissingParameterIsNamed) {
  const v1::KernelKey key = Gemm(64, 64, 64);
  const KernelTemplate& t = Find(key, GetParam());
  Variant v = t.Space(key).ValidVariants().front();
  v.erase("micro_n");
  try {
    t.Source(key, v);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("gpu_gemm_tiled: variant has no parameter 'micro_n'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tiletune::kernels
