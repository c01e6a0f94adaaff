// The host kernel templates without compiling: catalog lookup, search
// spaces and generated sources. (Compiling and running every template is
// tests/tuner/host_kernel_variants_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

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
const auto Gemm = [](int64_t m, int64_t n, int64_t k) { return testing::GemmShapeKey(m, n, k); };

TEST(HostKernelCatalog, FindsOneTemplatePerOp) {
  std::set<std::string> names;
  for (const auto& t : AllKernelTemplates()) names.insert(std::string(t->name()));
  EXPECT_TRUE(names.contains("host_gemm_blocked"));
  const std::pair<const char*, const char*> expected[] = {{"gemm", "host_gemm_blocked"},
                                                          {"softmax", "host_softmax_rows"},
                                                          {"rmsnorm", "host_rmsnorm_rows"},
                                                          {"layernorm", "host_layernorm_rows"}};
  for (const auto& [op, name] : expected) {
    std::string why;
    const auto dims =
        std::string(op) == "gemm"
            ? std::vector<std::pair<std::string, int64_t>>{{"m", 4}, {"n", 4}, {"k", 4}}
            : std::vector<std::pair<std::string, int64_t>>{{"rows", 4}, {"cols", 4}};
    const KernelTemplate* t = FindKernelTemplate(Key(op, dims), "host", &why);
    ASSERT_TRUE(t) << op << ": " << why;
    EXPECT_EQ(t->name(), name);
    EXPECT_EQ(t->backend(), "host");
  }
}

TEST(HostKernelCatalog, ExplainsWhyNoTemplateFits) {
  std::string why;
  EXPECT_FALSE(FindKernelTemplate(Gemm(4, 4, 4), "opencl", &why));
  EXPECT_EQ(why, "no kernel templates for backend 'opencl' in this build");

  v1::KernelKey half = Gemm(4, 4, 4);
  half.set_input_dtype(v1::DTYPE_F16);
  EXPECT_FALSE(FindKernelTemplate(half, "host", &why));
  // Every host GEMM family says why.
  EXPECT_EQ(why,
            "host_gemm_blocked: host kernels take f32 inputs, not f16; "
            "host_gemm_rowwise: host kernels take f32 inputs, not f16");

  v1::KernelKey bf16_bias = Gemm(4, 4, 4);
  auto* bias = bf16_bias.add_chain();
  bias->set_op("bias");
  bias->set_dtype(v1::DTYPE_BF16);
  EXPECT_FALSE(FindKernelTemplate(bf16_bias, "host", &why));
  EXPECT_NE(why.find("chain[0] (bias) has dtype bf16"), std::string::npos) << why;

  v1::KernelKey cast_f16 = Gemm(4, 4, 4);
  auto* cast = cast_f16.add_chain();
  cast->set_op("cast");
  cast->set_dtype(v1::DTYPE_F16);
  EXPECT_FALSE(FindKernelTemplate(cast_f16, "host", &why));
  EXPECT_NE(why.find("f16"), std::string::npos) << why;

  // attention has a host template now; an op no template serves says so.
  EXPECT_FALSE(FindKernelTemplate(Key("conv", {}), "host", &why));
  EXPECT_EQ(why, "no host kernel template for op 'conv'");
}

TEST(HostGemmSpace, FollowsTheShape) {
  const KernelTemplate* t = FindKernelTemplate(Gemm(1024, 1024, 1024), "host", nullptr);
  ASSERT_TRUE(t);
  const SearchSpace big = t->Space(Gemm(1024, 1024, 1024));
  const SearchSpace small = t->Space(Gemm(8, 16, 8));
  const auto big_valid = big.ValidVariants(), small_valid = small.ValidVariants();
  EXPECT_GT(big_valid.size(), 200u);
  EXPECT_LE(big_valid.size(), 500u);
  EXPECT_EQ(small_valid.size(), 8u);  // 32x64x64 tiles, two micro shapes each way, two unrolls
  for (const auto& v : small_valid) {
    EXPECT_EQ(v.at("threads"), 1) << "one row block cannot feed two threads";
    EXPECT_EQ(v.at("tile_m"), 32);
  }
  for (const auto& v : big_valid) {
    EXPECT_FALSE(v.contains(std::string(kPlantedFault)));
    EXPECT_EQ(v.at("tile_m") % v.at("micro_m"), 0);
  }
  EXPECT_EQ(small.Violation({{"tile_m", 128},
                             {"tile_n", 64},
                             {"tile_k", 64},
                             {"micro_m", 4},
                             {"micro_n", 16},
                             {"k_unroll", 1},
                             {"threads", 1}}),
            "tile_m <= m rounded up to 32");
  EXPECT_EQ(big.Violation({{"tile_m", 32},
                           {"tile_n", 64},
                           {"tile_k", 64},
                           {"micro_m", 6},
                           {"micro_n", 16},
                           {"k_unroll", 1},
                           {"threads", 1}}),
            "micro_m divides tile_m");
}

TEST(HostRowSpaces, FollowTheShape) {
  const v1::KernelKey one_row = Key("softmax", {{"rows", 1}, {"cols", 3}});
  const KernelTemplate* t = FindKernelTemplate(one_row, "host", nullptr);
  ASSERT_TRUE(t);
  // Narrowest lanes, one row per task, one thread: the algorithm choices remain.
  EXPECT_EQ(t->Space(one_row).ValidVariants().size(), 4u);
  const v1::KernelKey many = Key("softmax", {{"rows", 4096}, {"cols", 1000}});
  EXPECT_EQ(t->Space(many).ValidVariants().size(), 72u);
}

TEST(HostKernelSource, ChainsTheEpilogueInKeyOrder) {
  v1::KernelKey key = Gemm(37, 53, 29);
  for (const char* op : {"bias", "gelu_tanh", "residual_add", "scale"}) key.add_chain()->set_op(op);
  const KernelTemplate* t = FindKernelTemplate(key, "host", nullptr);
  ASSERT_TRUE(t);
  const Variant v = t->Space(key).ValidVariants().front();
  const KernelSource s = t->Source(key, v);
  EXPECT_EQ(s.kernel_name, "host_gemm_blocked");
  EXPECT_EQ(s.entry, "tiletune_host_gemm_blocked");
  EXPECT_EQ(s.launch.threads(), v.at("threads"));
  EXPECT_NE(s.code.find("static constexpr int64_t tile_m = " + std::to_string(v.at("tile_m"))),
            std::string::npos);
  testing::ExpectInOrder(
      s.code, {"tt::bias{args->chain.tensors[0]}", "tt::gelu_tanh{}",
               "tt::residual_add{args->chain.tensors[2]}", "tt::scale{args->chain.scalars[3]}"});
  std::set<std::string> headers;
  for (const auto& [name, text] : s.headers) {
    EXPECT_FALSE(text.empty()) << name;
    headers.insert(name);
  }
  EXPECT_TRUE(headers.contains("ops/gemm/cpu/gemm_blocked.h"));
  EXPECT_TRUE(headers.contains("tt/host/abi.h"));
}

// The GEMM baseline is OpenBLAS's sgemm and the chain as one pass, on as
// many threads as a tuned kernel may use, linked by the host backend; where
// OpenBLAS does not link, our straightforward kernel.
TEST(HostKernelSource, TheGemmBaselineIsOpenBlasWhereItLinks) {
  const v1::KernelKey key = Key("gemm", {{"m", 16}, {"n", 32}, {"k", 8}}, {"bias", "gelu_tanh"});
  const KernelTemplate* t = FindKernelTemplate(key, "host", nullptr);
  ASSERT_TRUE(t);
  for (const int64_t cpus : {1, 2, 8}) {
    DeviceDescription device = kHostCpu;
    device.compute_units = cpus;
    const Baseline blas = t->BaselineFor(key, device);
    EXPECT_EQ(blas.name, "openblas_sgemm");
    EXPECT_TRUE(blas.vendor_library.empty()) << "a compiled baseline";
    ASSERT_TRUE(blas.source);
    EXPECT_EQ(blas.source->launch.threads(), std::min<int64_t>(cpus, 2)) << cpus;
    testing::ExpectInOrder(blas.source->code, {"#include \"ops/gemm/cpu/gemm_openblas.h\"",
                                               "tt::bias{args->chain.tensors[0]}",
                                               "tt::gelu_tanh{}", "tt::gemm_openblas<Config>"});
    EXPECT_EQ(blas.source->compile_options,
              std::vector<std::string>{std::string(host::kLinkOpenBlasOption)});
  }
  EXPECT_EQ(t->BaselineFor(key).name, "openblas_sgemm") << "the compile target has OpenBLAS";

  DeviceDescription without = kHostCpu;
  without.has_openblas = false;
  const Baseline naive = t->BaselineFor(key, without);
  EXPECT_EQ(naive.name, "host-naive");
  ASSERT_TRUE(naive.source);
  EXPECT_NE(naive.source->code.find("tt::gemm_naive<Config>"), std::string::npos);
  EXPECT_TRUE(naive.source->compile_options.empty());
}

// Row ops keep our straightforward kernel, OpenBLAS or not.
TEST(HostKernelSource, RowBaselinesAreTheStraightforwardKernels) {
  for (const char* op : {"softmax", "rmsnorm", "layernorm", "elementwise"}) {
    const v1::KernelKey key = Key(op, {{"rows", 4}, {"cols", 8}});
    const KernelTemplate* t = FindKernelTemplate(key, "host", nullptr);
    ASSERT_TRUE(t) << op;
    const Baseline base = t->BaselineFor(key);
    EXPECT_EQ(base.name, "host-naive") << op;
    ASSERT_TRUE(base.source);
    EXPECT_NE(base.source->code.find("tt::" + std::string(op) + "_naive<Config>"),
              std::string::npos)
        << op;
    EXPECT_TRUE(base.source->compile_options.empty()) << op;
  }
}

TEST(HostKernelSource, PlantsFaultsOnlyOnRequest) {
  const v1::KernelKey key = Key("rmsnorm", {{"rows", 4}, {"cols", 8}});
  const KernelTemplate* t = FindKernelTemplate(key, "host", nullptr);
  ASSERT_TRUE(t);
  Variant v = t->Space(key).ValidVariants().front();
  const std::string clean = t->Source(key, v).code;
  EXPECT_EQ(clean.find("planted fault"), std::string::npos);
  for (int fault : {1, 2, 3}) {
    v[std::string(kPlantedFault)] = fault;
    EXPECT_NE(t->Source(key, v).code.find("planted fault"), std::string::npos) << fault;
  }
  v[std::string(kPlantedFault)] = 4;
  EXPECT_THROW(t->Source(key, v), std::invalid_argument);
}

TEST(HostKernelSource, MissingParameterIsNamed) {
  const v1::KernelKey key = Gemm(8, 8, 8);
  const KernelTemplate* t = FindKernelTemplate(key, "host", nullptr);
  ASSERT_TRUE(t);
  Variant v = t->Space(key).ValidVariants().front();
  v.erase("tile_k");
  try {
    t->Source(key, v);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'tile_k'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tiletune::kernels
