// Every tile GEMM variant (and the naive GEMM) of a set of odd shapes,
// layouts, dtypes and epilogue chains, run on a CUDA device against a
// float64 reference. Skips without a CUDA driver and device.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iostream>
#include <thread>

#include "kernels/gemm/gemm_source.h"
#include "kernels/gemm/gemm_space.h"
#include "kernels/kernel_key.h"
#include "tile_gpu_test_support.h"

namespace tiletune::kernels {
namespace {

using testing::HostTensor;

constexpr double kScale = 0.75;

v1::KernelKey Gemm(int64_t m, int64_t n, int64_t k, int64_t batch, v1::DType in, v1::DType out,
                   bool a_col, bool b_col, std::vector<std::pair<const char*, v1::DType>> chain) {
  v1::KernelKey key;
  key.set_op("gemm");
  key.set_input_dtype(in);
  key.set_output_dtype(out);
  for (const auto& [name, size] :
       {std::pair<const char*, int64_t>{"m", m}, {"n", n}, {"k", k}, {"batch", batch}}) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  for (const auto& [tensor, col] : {std::pair<const char*, bool>{"a", a_col}, {"b", b_col}}) {
    auto* l = key.add_layouts();
    l->set_tensor(tensor);
    l->set_layout(col ? v1::LAYOUT_COL_MAJOR : v1::LAYOUT_ROW_MAJOR);
  }
  for (const auto& [op, dtype] : chain) {
    auto* c = key.add_chain();
    c->set_op(op);
    c->set_dtype(dtype);
    if (std::string(op) == "scale") c->set_scalar(kScale);
  }
  return NormalizeKernelKey(key);
}

// A key's inputs and its float64 reference on `rows` of every batch entry
// (all rows by default), computed from the values the device reads (inputs
// already rounded to their dtype).
struct Problem {
  v1::KernelKey key;
  gemm::GemmProblem dims;
  HostTensor a, b;
  std::vector<HostTensor> chain;  // empty where an op takes no tensor
  std::vector<int64_t> rows;
  std::vector<double> reference;  // batch x rows x n
};

Problem MakeProblem(const v1::KernelKey& key, uint64_t seed, std::vector<int64_t> rows = {}) {
  Problem p;
  p.key = key;
  p.dims = gemm::ProblemOf(key);
  const auto& d = p.dims;
  if (rows.empty()) {
    for (int64_t i = 0; i < d.m; ++i) rows.push_back(i);
  }
  p.rows = std::move(rows);
  const int64_t r = static_cast<int64_t>(p.rows.size());
  p.a = testing::RandomTensor(d.batch * d.m * d.k, key.input_dtype(), seed);
  p.b = testing::RandomTensor(d.batch * d.k * d.n, key.input_dtype(), seed + 1);
  for (int i = 0; i < key.chain_size(); ++i) {
    const std::string& op = key.chain(i).op();
    const int64_t count = op == "bias" ? d.n : op == "residual_add" ? d.batch * d.m * d.n : 0;
    p.chain.push_back(count ? testing::RandomTensor(count, key.chain(i).dtype(), seed + 2 + i)
                            : HostTensor{});
  }
  p.reference.assign(d.batch * r * d.n, 0.0);
  for (int64_t t = 0; t < d.batch; ++t) {
    const double* a = p.a.values.data() + t * d.m * d.k;
    const double* b = p.b.values.data() + t * d.k * d.n;
    for (int64_t ri = 0; ri < r; ++ri) {
      const int64_t i = p.rows[ri];
      double* c = p.reference.data() + (t * r + ri) * d.n;
      for (int64_t q = 0; q < d.k; ++q) {
        const double aiq = d.a_col_major ? a[q * d.lda + i] : a[i * d.lda + q];
        for (int64_t j = 0; j < d.n; ++j) {
          c[j] += aiq * (d.b_col_major ? b[j * d.ldb + q] : b[q * d.ldb + j]);
        }
      }
      for (int64_t j = 0; j < d.n; ++j) {
        double& v = c[j];
        const int64_t idx = (t * d.m + i) * d.ldc + j;
        for (int op_index = 0; op_index < key.chain_size(); ++op_index) {
          const std::string& op = key.chain(op_index).op();
          if (op == "bias") v += p.chain[op_index].values[j];
          if (op == "scale") v *= kScale;
          if (op == "relu") v = std::max(v, 0.0);
          if (op == "gelu_tanh") {
            v = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
          }
          if (op == "gelu_erf") v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
          if (op == "silu") v = v / (1 + std::exp(-v));
          if (op == "residual_add") v += p.chain[op_index].values[idx];
        }
      }
    }
  }
  return p;
}

// How far a correct kernel may land from the reference, as a relative
// Frobenius error: the output's rounding dominates.
double Tolerance(v1::DType out) {
  return out == v1::DTYPE_BF16 ? 1e-2 : out == v1::DTYPE_F16 ? 2e-3 : 2e-4;
}

// tf32 products: each factor rounded to 10 mantissa bits (2^-11 relative
// at most, so one tf32 ulp, 2^-10, bounds a product's error; random inputs
// land near 3e-4), plus fp32 accumulation growing with k. An f32 output
// adds nothing; a 16-bit one its own rounding.
double Tf32Tolerance(const v1::KernelKey& key, int64_t k) {
  return std::max(Tolerance(key.output_dtype()),
                  std::ldexp(1.0, -10) + static_cast<double>(k) * std::ldexp(1.0, -24));
}
// Below this, a tf32 key's result would be exact f32: the tensor cores did
// not round the inputs, so the test would not be testing the tf32 path.
constexpr double kTf32Shows = 2e-5;

v1::KernelKey AllowingTf32(v1::KernelKey key) {
  key.set_allow_tf32(true);
  return key;
}

// The first, last and a spread of rows, both sides of every 64-row tile
// boundary up to the spread: what large shapes are checked on.
std::vector<int64_t> SampledRows(int64_t m) {
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < m; i += m / 16) rows.push_back(i);
  for (int64_t i = 63; i + 1 < m; i += 64 * (m / 512 + 1)) {
    rows.push_back(i);
    rows.push_back(i + 1);
  }
  rows.push_back(m - 1);
  std::ranges::sort(rows);
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

class GemmOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    rig_ = testing::OpenCudaRig(&why);
    if (!rig_) GTEST_SKIP() << "no CUDA device: " << why;
  }

  // The relative Frobenius error of `source` on `p`'s rows; NaN when any
  // output was not written (outputs start as NaN) or the kernel failed to
  // load or run.
  double Error(const KernelSource& source, const std::string& cubin, const Problem& p) {
    runtime::DeviceExecutor& ex = *rig_->executor;
    if (const auto failed = testing::LoadCubin(*rig_, cubin, source.entry)) {
      ADD_FAILURE() << source.entry << ": " << *failed;
      return NAN;
    }
    runtime::KernelArguments args;
    args.a = testing::Upload(ex, p.a);
    args.b = testing::Upload(ex, p.b);
    const auto& d = p.dims;
    const size_t out_bytes = d.batch * d.m * d.n * testing::DTypeBytes(p.key.output_dtype());
    args.out = ex.Allocate(out_bytes);
    const std::vector<unsigned char> poison(out_bytes, 0xff);
    ex.CopyIn(args.out, poison.data(), out_bytes);
    for (int i = 0; i < p.key.chain_size(); ++i) {
      args.chain_tensors.push_back(p.chain[i].bytes.empty() ? runtime::DeviceBuffer{}
                                                            : testing::Upload(ex, p.chain[i]));
      args.chain_scalars.push_back(p.key.chain(i).op() == "scale" ? kScale : 0.0);
    }
    args.m = d.m;
    args.n = d.n;
    args.k = d.k;
    args.batch = d.batch;
    args.lda = d.lda;
    args.ldb = d.ldb;
    args.ldc = d.ldc;
    for (int i = 0; i < 3; ++i) {
      args.grid[i] = static_cast<uint32_t>(source.launch.grid(i));
      args.block[i] = static_cast<uint32_t>(source.launch.block(i));
    }
    args.shared_memory_bytes = static_cast<uint32_t>(source.launch.shared_memory_bytes());
    if (const auto failed = ex.Launch(args)) {
      ADD_FAILURE() << source.entry << ": " << *failed;
      ex.ReleaseAll();
      return NAN;
    }
    std::vector<unsigned char> out(out_bytes);
    ex.CopyOut(out.data(), args.out, out_bytes);
    ex.ReleaseAll();
    const std::vector<double> got = testing::Decode(out, p.key.output_dtype());
    if (!std::ranges::all_of(got, [](double v) { return std::isfinite(v); })) return NAN;
    const int64_t r = static_cast<int64_t>(p.rows.size());
    double diff = 0, norm = 0;
    for (int64_t t = 0; t < d.batch; ++t) {
      for (int64_t ri = 0; ri < r; ++ri) {
        for (int64_t j = 0; j < d.n; ++j) {
          const double want = p.reference[(t * r + ri) * d.n + j];
          const double have = got[(t * d.m + p.rows[ri]) * d.ldc + j];
          diff += (have - want) * (have - want);
          norm += want * want;
        }
      }
    }
    return std::sqrt(diff / norm);
  }

  // Compiles every source (NVRTC runs its programs in parallel).
  std::vector<std::string> CompileAll(const std::vector<KernelSource>& sources) {
    std::vector<std::string> cubins(sources.size()), logs(sources.size());
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t) {
      pool.emplace_back([&] {
        for (size_t s; (s = next++) < sources.size();) {
          if (auto cubin = testing::CompileForSm90(*rig_->nvrtc, sources[s], &logs[s])) {
            cubins[s] = std::move(*cubin);
          }
        }
      });
    }
    for (auto& t : pool) t.join();
    for (size_t s = 0; s < sources.size(); ++s) {
      EXPECT_FALSE(cubins[s].empty()) << sources[s].entry << ":\n" << logs[s];
    }
    return cubins;
  }

  std::optional<testing::CudaRig> rig_;
};

TEST_F(GemmOnGpu, EveryVariantMatchesTheReference) {
  const auto B = v1::DTYPE_BF16, H = v1::DTYPE_F16, F = v1::DTYPE_F32;
  const v1::KernelKey keys[] = {
      Gemm(37, 53, 29, 3, B, B, false, true,
           {{"bias", B}, {"scale", B}, {"gelu_tanh", B}, {"residual_add", B}, {"cast", B}}),
      Gemm(37, 53, 29, 1, H, F, true, true, {{"bias", H}, {"relu", H}}),
      Gemm(300, 200, 136, 2, B, B, false, false, {{"bias", B}}),
      Gemm(300, 200, 136, 1, H, H, true, false, {}),
      Gemm(130, 260, 1000, 1, B, B, true, true, {{"gelu_erf", B}}),
      Gemm(16, 1000, 4096, 1, B, B, false, true, {{"bias", B}, {"silu", B}}),
      Gemm(640, 768, 520, 1, B, F, false, true, {{"residual_add", F}}),
      Gemm(77, 129, 65, 2, B, B, false, true, {{"bias", B}, {"gelu_tanh", B}}),
      Gemm(200, 136, 1000, 1, H, H, false, true, {{"silu", H}}),
      Gemm(1, 1, 1, 1, B, B, false, false, {})};
  uint64_t seed = 100;
  for (const v1::KernelKey& key : keys) {
    std::string why;
    const KernelTemplate* t = FindKernelTemplate(key, "cuda", &why);
    ASSERT_TRUE(t) << why;
    const Problem p = MakeProblem(key, seed += 10);
    std::vector<KernelSource> sources;
    for (const Variant& v : t->Space(key).ValidVariants()) sources.push_back(t->Source(key, v));
    // The naive GEMM: no longer the cuda baseline (cuBLASLt is), still HIP's.
    sources.push_back(gemm::NaiveGemmSource(key, gemm::kSm90Target));
    const std::vector<std::string> cubins = CompileAll(sources);
    for (size_t s = 0; s < sources.size(); ++s) {
      if (cubins[s].empty()) continue;
      const double error = Error(sources[s], cubins[s], p);
      EXPECT_LE(error, Tolerance(key.output_dtype()))
          << CanonicalKeyString(key) << " " << sources[s].entry;
    }
  }
}

// The wgmma variants on the shapes they are for, with bias + GELU, checked
// on sampled rows: the first and last, both sides of every 64-row boundary
// a block tile can have, and a spread between.
TEST_F(GemmOnGpu, WgmmaVariantsOfLargeShapesMatchTheReference) {
  const auto B = v1::DTYPE_BF16;
  const v1::KernelKey keys[] = {
      Gemm(4096, 4096, 4096, 1, B, B, false, true, {{"bias", B}, {"gelu_tanh", B}}),
      Gemm(128, 14336, 4096, 1, B, B, false, true, {{"bias", B}, {"gelu_tanh", B}})};
  uint64_t seed = 500;
  for (const v1::KernelKey& key : keys) {
    std::string why;
    const KernelTemplate* t = FindKernelTemplate(key, "cuda", &why);
    ASSERT_TRUE(t) << why;
    const Problem p = MakeProblem(key, seed += 10, SampledRows(gemm::ProblemOf(key).m));
    std::vector<KernelSource> sources;
    for (const Variant& v : t->Space(key).ValidVariants()) {
      if (v.at("mma") == gemm::kMmaWarpgroup) sources.push_back(t->Source(key, v));
    }
    ASSERT_FALSE(sources.empty()) << CanonicalKeyString(key);
    const std::vector<std::string> cubins = CompileAll(sources);
    for (size_t s = 0; s < sources.size(); ++s) {
      if (cubins[s].empty()) continue;
      const double error = Error(sources[s], cubins[s], p);
      EXPECT_LE(error, Tolerance(B)) << CanonicalKeyString(key) << " " << sources[s].entry;
      std::cout << sources[s].entry << ": rel error " << error << "\n";
    }
  }
}

// f32 keys that allow tf32: every variant (mma.sync .tf32 on float tiles)
// of odd shapes in every layout pair, batches, small-M and the epilogue
// chains, against the float64 reference of the f32 inputs; 2048^3 with
// bias + GELU on sampled rows.
TEST_F(GemmOnGpu, Tf32VariantsMatchTheReference) {
  const auto F = v1::DTYPE_F32, B = v1::DTYPE_BF16;
  const v1::KernelKey keys[] = {
      Gemm(77, 129, 65, 2, F, F, false, true, {{"bias", F}, {"gelu_tanh", F}}),
      Gemm(77, 129, 65, 1, F, F, true, false, {}),
      Gemm(37, 53, 29, 3, F, F, true, true,
           {{"bias", F}, {"scale", F}, {"silu", F}, {"residual_add", F}}),
      Gemm(300, 200, 136, 2, F, B, false, false, {{"bias", F}, {"relu", F}, {"cast", B}}),
      Gemm(16, 1000, 4096, 1, F, F, false, true, {{"bias", F}, {"silu", F}}),
      Gemm(2048, 2048, 2048, 1, F, F, false, false, {{"bias", F}, {"gelu_tanh", F}})};
  uint64_t seed = 900;
  for (const v1::KernelKey& raw : keys) {
    const v1::KernelKey key = AllowingTf32(raw);
    std::string why;
    const KernelTemplate* t = FindKernelTemplate(key, "cuda", &why);
    ASSERT_TRUE(t) << why;
    ASSERT_EQ(t->name(), gemm::kTileGemmName) << CanonicalKeyString(key);
    const gemm::GemmProblem d = gemm::ProblemOf(key);
    const Problem p =
        d.m >= 1024 ? MakeProblem(key, seed += 10, SampledRows(d.m)) : MakeProblem(key, seed += 10);
    std::vector<KernelSource> sources;
    for (const Variant& v : t->Space(key).ValidVariants()) sources.push_back(t->Source(key, v));
    ASSERT_FALSE(sources.empty()) << CanonicalKeyString(key);
    const std::vector<std::string> cubins = CompileAll(sources);
    for (size_t s = 0; s < sources.size(); ++s) {
      if (cubins[s].empty()) continue;
      const double error = Error(sources[s], cubins[s], p);
      EXPECT_LE(error, Tf32Tolerance(key, d.k))
          << CanonicalKeyString(key) << " " << sources[s].entry;
      if (key.output_dtype() == F) {
        EXPECT_GT(error, kTf32Shows) << CanonicalKeyString(key) << " " << sources[s].entry;
      }
      std::cout << sources[s].entry << ": rel error " << error << "\n";
    }
  }
}

TEST_F(GemmOnGpu, PlantedWrongResultIsCaught) {
  const auto B = v1::DTYPE_BF16;
  const v1::KernelKey key = Gemm(300, 200, 136, 1, B, B, false, true, {{"bias", B}});
  std::string why;
  const KernelTemplate* t = FindKernelTemplate(key, "cuda", &why);
  ASSERT_TRUE(t) << why;
  const Problem p = MakeProblem(key, 7);
  const auto variants = t->Space(key).ValidVariants();
  for (const int64_t mma : {gemm::kMmaSync, gemm::kMmaWarpgroup}) {
    const auto first =
        std::ranges::find_if(variants, [mma](const Variant& v) { return v.at("mma") == mma; });
    ASSERT_NE(first, variants.end()) << "mma=" << mma;
    Variant v = *first;
    const KernelSource clean = t->Source(key, v);
    v["planted_fault"] = 3;
    const KernelSource wrong = t->Source(key, v);
    const std::vector<std::string> cubins = CompileAll({clean, wrong});
    ASSERT_FALSE(cubins[0].empty() || cubins[1].empty());
    EXPECT_LE(Error(clean, cubins[0], p), Tolerance(B)) << clean.entry;
    EXPECT_GT(Error(wrong, cubins[1], p), 10 * Tolerance(B)) << wrong.entry;
  }
}

TEST_F(GemmOnGpu, PlantedWrongResultIsCaughtOnTf32) {
  const auto F = v1::DTYPE_F32;
  const v1::KernelKey key = AllowingTf32(Gemm(300, 200, 136, 1, F, F, false, true, {{"bias", F}}));
  std::string why;
  const KernelTemplate* t = FindKernelTemplate(key, "cuda", &why);
  ASSERT_TRUE(t) << why;
  const Problem p = MakeProblem(key, 11);
  Variant v = t->Space(key).ValidVariants().front();
  const KernelSource clean = t->Source(key, v);
  v["planted_fault"] = 3;
  const KernelSource wrong = t->Source(key, v);
  const std::vector<std::string> cubins = CompileAll({clean, wrong});
  ASSERT_FALSE(cubins[0].empty() || cubins[1].empty());
  EXPECT_LE(Error(clean, cubins[0], p), Tf32Tolerance(key, 136)) << clean.entry;
  EXPECT_GT(Error(wrong, cubins[1], p), 10 * Tf32Tolerance(key, 136)) << wrong.entry;
}

}  // namespace
}  // namespace tiletune::kernels
