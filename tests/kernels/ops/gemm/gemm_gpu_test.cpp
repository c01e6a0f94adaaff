// Every tile GEMM variant (and the naive GEMM) of a set of odd shapes,
// layouts, dtypes and epilogue chains, run on a CUDA device against the
// benchmark worker's float64 reference (tuner::HostReference) of the inputs
// the worker draws. Skips without a CUDA driver and device.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <thread>

#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/gemm_op.h"
#include "kernels/ops/gemm/tile_gemm_source.h"
#include "kernels/ops/gemm/tile_gemm_space.h"
#include "runtime/cuda/cuda_executor.h"
#include "tests/kernels/tt/tile_gpu_test_support.h"
#include "tests/support/gemm_test_key.h"
#include "tuner/worker/element_codec.h"
#include "tuner/worker/host_reference.h"
#include "tuner/worker/output_validation.h"
#include "tuner/worker/problem_inputs.h"
#include "tuner/worker/problem_upload.h"

namespace tiletune::kernels {
namespace {

using tiletune::testing::AllowingTf32;
using tiletune::testing::GatedBySwiglu;
using tiletune::testing::GemmTestKey;

// A key's inputs, drawn as the worker draws them, and their float64
// reference on `rows` of every batch entry (all rows by default).
struct Problem {
  tuner::ProblemInputs inputs;
  tuner::EncodedInputs encoded;  // uploaded for every variant
  tuner::Reference reference;
};

Problem MakeProblem(const v1::KernelKey& key, uint64_t seed,
                    const std::vector<int64_t>& rows = {}) {
  Problem p;
  p.inputs = tuner::MakeProblemInputs(key, seed);
  p.encoded = tuner::EncodeInputs(p.inputs);
  if (rows.empty()) {
    p.reference =
        tuner::HostReference(p.inputs, static_cast<int>(std::thread::hardware_concurrency()));
    return p;
  }
  std::vector<int64_t> output_rows;
  for (int64_t t = 0; t < p.inputs.batch; ++t) {
    for (const int64_t i : rows) output_rows.push_back(t * p.inputs.rows + i);
  }
  p.reference = tuner::HostReference(p.inputs, std::move(output_rows),
                                     static_cast<int>(std::thread::hardware_concurrency()));
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
// adds nothing; a 16-bit one its own rounding. A gate multiplies two such
// products, so their relative errors add (tma_ws_gemm's truncating tf32
// reads landed at 1.3e-3 on an H100).
double Tf32Tolerance(const v1::KernelKey& key, int64_t k) {
  const double products = gemm::Gated(key) ? 2 : 1;
  return std::max(
      Tolerance(key.output_dtype()),
      products * (std::ldexp(1.0, -10) + static_cast<double>(k) * std::ldexp(1.0, -24)));
}
// Below this, a tf32 key's result would be exact f32: the tensor cores did
// not round the inputs, so the test would not be testing the tf32 path.
constexpr double kTf32Shows = 2e-5;

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

// A key whose families a test checks, on sampled rows where `sampled`.
struct FamilyCase {
  v1::KernelKey key;
  bool sampled;
};

class GemmOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    rig_ = testing::OpenCudaRig(&why);
    if (!rig_) GTEST_SKIP() << "no CUDA device: " << why;
  }

  // The relative Frobenius error of `source` on `p`'s reference rows; NaN
  // when any output was not written (outputs start as NaN) or the kernel
  // failed to load or run.
  double Error(const KernelSource& source, const std::string& cubin, const Problem& p) {
    runtime::DeviceExecutor& ex = *rig_->executor;
    if (const auto failed = testing::LoadCubin(*rig_, cubin, source.entry)) {
      ADD_FAILURE() << source.entry << ": " << *failed;
      return NAN;
    }
    const tuner::ProblemInputs& in = p.inputs;
    const v1::DType out_dtype = in.key.output_dtype();
    runtime::KernelArguments args = tuner::UploadProblem(ex, in, p.encoded);
    std::vector<std::byte> out =
        tuner::PoisonElements(static_cast<size_t>(in.output_elements), out_dtype);
    ex.CopyIn(args.tensors.at("c"), out.data(), out.size());
    // As the worker launches: a persistent grid sized for the device, the
    // TMA families' tensor maps encoded for these tensors.
    runtime::SetLaunchGeometry(source.launch, ex.compute_units(), args);
    if (const auto failed = ex.Launch(args)) {
      ADD_FAILURE() << source.entry << ": " << *failed;
      ex.ReleaseAll();
      return NAN;
    }
    ex.CopyOut(out.data(), args.tensors.at("c"), out.size());
    ex.ReleaseAll();
    // Every element is scanned for poison; the error is over the
    // reference's rows. Each test holds it to its own tolerance.
    const tuner::OutputCheck check =
        tuner::CheckOutput(out, out_dtype, p.reference, std::numeric_limits<double>::infinity());
    return check.unwritten > 0 || check.non_finite > 0 ? NAN : check.rel_error;
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

  // Every variant of every CUDA family serving the case's key (tile_gemm
  // too where `with_tile_gemm`) within the key's tolerance on fresh inputs;
  // prints how many of each family ran.
  void CheckFamilies(const FamilyCase& c, uint64_t seed, bool with_tile_gemm) {
    const v1::KernelKey& key = c.key;
    std::string why;
    std::vector<KernelSource> sources;
    for (const KernelTemplate* t : ServingKernelTemplates(key, "cuda", &why)) {
      if (!with_tile_gemm && t->name() == gemm::kTileGemmName) continue;
      for (const Variant& v : t->Space(key).ValidVariants()) sources.push_back(t->Source(key, v));
    }
    ASSERT_FALSE(sources.empty()) << CanonicalKeyString(key) << ": " << why;
    const Problem p = c.sampled ? MakeProblem(key, seed, SampledRows(gemm::ProblemOf(key).m))
                                : MakeProblem(key, seed);
    const std::vector<std::string> cubins = CompileAll(sources);
    const double tolerance = key.allow_tf32() ? Tf32Tolerance(key, gemm::ProblemOf(key).k)
                                              : Tolerance(key.output_dtype());
    std::map<std::string, int> per_family;
    for (size_t s = 0; s < sources.size(); ++s) {
      if (cubins[s].empty()) continue;
      const double error = Error(sources[s], cubins[s], p);
      EXPECT_LE(error, tolerance) << CanonicalKeyString(key) << " " << sources[s].entry;
      if (key.allow_tf32()) std::cout << sources[s].entry << ": rel error " << error << "\n";
      ++per_family[sources[s].kernel_name];
    }
    for (const auto& [family, n] : per_family) {
      std::cout << CanonicalKeyString(key) << ": " << n << " " << family << " variants checked\n";
    }
  }

  std::optional<testing::CudaRig> rig_;
};

TEST_F(GemmOnGpu, EveryVariantMatchesTheReference) {
  const auto B = v1::DTYPE_BF16, H = v1::DTYPE_F16, F = v1::DTYPE_F32;
  const v1::KernelKey keys[] = {
      GemmTestKey(37, 53, 29, 3, B, B, false, true,
                  {{"bias", B}, {"scale", B}, {"gelu_tanh", B}, {"residual_add", B}, {"cast", B}}),
      GemmTestKey(37, 53, 29, 1, H, F, true, true, {{"bias", H}, {"relu", H}}),
      GemmTestKey(300, 200, 136, 2, B, B, false, false, {{"bias", B}}),
      GemmTestKey(300, 200, 136, 1, H, H, true, false, {}),
      GemmTestKey(130, 260, 1000, 1, B, B, true, true, {{"gelu_erf", B}}),
      GemmTestKey(16, 1000, 4096, 1, B, B, false, true, {{"bias", B}, {"silu", B}}),
      GemmTestKey(640, 768, 520, 1, B, F, false, true, {{"residual_add", F}}),
      GemmTestKey(77, 129, 65, 2, B, B, false, true, {{"bias", B}, {"gelu_tanh", B}}),
      GemmTestKey(200, 136, 1000, 1, H, H, false, true, {{"silu", H}}),
      GemmTestKey(1, 1, 1, 1, B, B, false, false, {})};
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
      GemmTestKey(4096, 4096, 4096, 1, B, B, false, true, {{"bias", B}, {"gelu_tanh", B}}),
      GemmTestKey(128, 14336, 4096, 1, B, B, false, true, {{"bias", B}, {"gelu_tanh", B}})};
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

// The families beside tile_gemm (tma_ws_gemm, tma_decode_gemm,
// mma_decode_gemm): every variant of odd decode and prefill shapes (m, n
// and k no multiple of any tile, k a multiple of 8 as their 16-byte rows
// need; C rows of 500 bytes, which TMA cannot store; batches; f32 and
// 16-bit outputs; chains), whole, and LLM shapes on sampled rows;
// tma_ws_gemm also with B row-major (N-major panels) and on f32 keys
// allowing tf32, held to the tf32 tolerance.
TEST_F(GemmOnGpu, TmaAndDecodeFamiliesMatchTheReference) {
  const auto B = v1::DTYPE_BF16, H = v1::DTYPE_F16, F = v1::DTYPE_F32;
  const FamilyCase cases[] = {
      {GemmTestKey(1, 1000, 1032, 1, B, B, false, true,
                   {{"bias", B}, {"gelu_tanh", B}, {"residual_add", B}}),
       false},
      {GemmTestKey(7, 4104, 4096, 1, B, B, false, true, {{"bias", B}, {"silu", B}}), false},
      {GemmTestKey(33, 520, 1032, 2, B, B, false, true, {{"relu", B}}), false},
      {GemmTestKey(61, 1000, 1032, 1, H, F, false, true, {{"scale", H}}), false},
      {GemmTestKey(300, 250, 136, 2, H, H, false, true, {{"relu", H}}), false},
      {GemmTestKey(640, 768, 520, 1, B, F, false, true, {{"residual_add", F}}), false},
      {GemmTestKey(1000, 1032, 1000, 1, B, B, false, true, {{"bias", B}, {"gelu_tanh", B}}), false},
      {GemmTestKey(16, 14336, 4096, 1, B, B, false, true, {}), false},
      {GemmTestKey(300, 328, 136, 2, B, B, false, false, {{"bias", B}, {"relu", B}}), false},
      {GemmTestKey(520, 1000, 264, 1, H, F, false, false, {{"residual_add", F}}), false},
      {AllowingTf32(GemmTestKey(300, 260, 136, 2, F, F, false, true, {{"bias", F}, {"silu", F}})),
       false},
      {AllowingTf32(GemmTestKey(640, 1000, 520, 1, F, B, false, true, {{"cast", B}})), false},
      {AllowingTf32(
           GemmTestKey(2048, 2048, 2048, 1, F, F, false, true, {{"bias", F}, {"gelu_tanh", F}})),
       true},
      {GemmTestKey(2048, 4096, 4096, 1, B, B, false, false, {}), true},
      {GemmTestKey(4096, 4096, 4096, 1, B, B, false, true, {{"bias", B}, {"gelu_tanh", B}}), true},
      {GemmTestKey(2048, 14336, 4096, 1, B, B, false, true, {}), true}};
  uint64_t seed = 900;
  // tile_gemm has its own tests above.
  for (const FamilyCase& c : cases) CheckFamilies(c, seed += 10, false);
}

// Gated keys (silu(A·B) ⊙ (A·B_up), then the chain): every variant of every
// CUDA family that serves them (tile_gemm's second main loop, tma_ws_gemm's
// stacked B boxes or N-major panels, tma_decode_gemm's stacked boxes gated
// after its cluster sum, gpu_gemm_tiled's two accumulator sets on exact
// f32), odd shapes, batches, f32 output, tf32, decode and prefill on
// sampled rows.
TEST_F(GemmOnGpu, GatedKeysMatchTheReference) {
  const auto B = v1::DTYPE_BF16, H = v1::DTYPE_F16, F = v1::DTYPE_F32;
  const FamilyCase cases[] = {
      {GatedBySwiglu(GemmTestKey(7, 1000, 1032, 1, B, B, false, true, {{"bias", B}})), false},
      {GatedBySwiglu(GemmTestKey(33, 520, 1032, 2, H, F, false, true, {{"relu", H}})), false},
      {GatedBySwiglu(GemmTestKey(16, 14336, 4096, 1, B, B, false, true, {})), false},
      {GatedBySwiglu(GemmTestKey(37, 53, 29, 3, H, F, true, false, {})), false},
      {GatedBySwiglu(GemmTestKey(300, 328, 136, 2, B, B, false, true, {{"residual_add", B}})),
       false},
      {GatedBySwiglu(GemmTestKey(520, 1000, 264, 1, H, F, false, true, {})), false},
      {GatedBySwiglu(AllowingTf32(GemmTestKey(300, 260, 136, 1, F, F, false, true, {}))), false},
      {GatedBySwiglu(GemmTestKey(77, 129, 65, 2, F, F, true, false, {{"bias", F}})), false},
      {GatedBySwiglu(GemmTestKey(300, 328, 136, 2, B, B, false, false, {{"bias", B}})), false},
      {GatedBySwiglu(GemmTestKey(2048, 1408, 4096, 1, B, B, false, true, {})), true},
      {GatedBySwiglu(GemmTestKey(2048, 1408, 4096, 1, B, B, false, false, {})), true}};
  uint64_t seed = 1700;
  for (const FamilyCase& c : cases) CheckFamilies(c, seed += 10, true);
}

// f32 keys that allow tf32: every variant (mma.sync .tf32 on float tiles)
// of odd shapes in every layout pair, batches, small-M and the epilogue
// chains, against the float64 reference of the f32 inputs; 2048^3 with
// bias + GELU on sampled rows.
TEST_F(GemmOnGpu, Tf32VariantsMatchTheReference) {
  const auto F = v1::DTYPE_F32, B = v1::DTYPE_BF16;
  const v1::KernelKey keys[] = {
      GemmTestKey(77, 129, 65, 2, F, F, false, true, {{"bias", F}, {"gelu_tanh", F}}),
      GemmTestKey(77, 129, 65, 1, F, F, true, false, {}),
      GemmTestKey(37, 53, 29, 3, F, F, true, true,
                  {{"bias", F}, {"scale", F}, {"silu", F}, {"residual_add", F}}),
      GemmTestKey(300, 200, 136, 2, F, B, false, false, {{"bias", F}, {"relu", F}, {"cast", B}}),
      GemmTestKey(16, 1000, 4096, 1, F, F, false, true, {{"bias", F}, {"silu", F}}),
      GemmTestKey(2048, 2048, 2048, 1, F, F, false, false, {{"bias", F}, {"gelu_tanh", F}})};
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
  const v1::KernelKey key = GemmTestKey(300, 200, 136, 1, B, B, false, true, {{"bias", B}});
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
    v[std::string(kernels::kPlantedFault)] = 3;
    const KernelSource wrong = t->Source(key, v);
    const std::vector<std::string> cubins = CompileAll({clean, wrong});
    ASSERT_FALSE(cubins[0].empty() || cubins[1].empty());
    EXPECT_LE(Error(clean, cubins[0], p), Tolerance(B)) << clean.entry;
    EXPECT_GT(Error(wrong, cubins[1], p), 10 * Tolerance(B)) << wrong.entry;
  }
}

TEST_F(GemmOnGpu, PlantedWrongResultIsCaughtOnTf32) {
  const auto F = v1::DTYPE_F32;
  const v1::KernelKey key =
      AllowingTf32(GemmTestKey(300, 200, 136, 1, F, F, false, true, {{"bias", F}}));
  std::string why;
  const KernelTemplate* t = FindKernelTemplate(key, "cuda", &why);
  ASSERT_TRUE(t) << why;
  const Problem p = MakeProblem(key, 11);
  Variant v = t->Space(key).ValidVariants().front();
  const KernelSource clean = t->Source(key, v);
  v[std::string(kernels::kPlantedFault)] = 3;
  const KernelSource wrong = t->Source(key, v);
  const std::vector<std::string> cubins = CompileAll({clean, wrong});
  ASSERT_FALSE(cubins[0].empty() || cubins[1].empty());
  EXPECT_LE(Error(clean, cubins[0], p), Tf32Tolerance(key, 136)) << clean.entry;
  EXPECT_GT(Error(wrong, cubins[1], p), 10 * Tf32Tolerance(key, 136)) << wrong.entry;
}

// A tile GEMM variant is built for the leading dimensions of its key (vec_a,
// vec_b: 16-byte loads); a launch that breaks that promise must trap before
// it reads a misaligned vector (gemm_mma_multistage.h, check_launch_promise),
// for the mma.sync and the wgmma main loops alike. Without the check, such a
// launch faults with CUDA_ERROR_MISALIGNED_ADDRESS instead, or not at all.
TEST_F(GemmOnGpu, ABrokenAlignmentPromiseTraps) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto B = v1::DTYPE_BF16;
  const v1::KernelKey key = GemmTestKey(256, 256, 256, 1, B, B, false, true, {});
  std::string why;
  const KernelTemplate* t = FindKernelTemplate(key, "cuda", &why);
  ASSERT_TRUE(t) << why;
  const Problem p = MakeProblem(key, 5);
  const auto variants = t->Space(key).ValidVariants();
  for (const int64_t mma : {gemm::kMmaSync, gemm::kMmaWarpgroup}) {
    const auto v =
        std::ranges::find_if(variants, [mma](const Variant& x) { return x.at("mma") == mma; });
    ASSERT_NE(v, variants.end()) << "mma=" << mma;
    const KernelSource source = t->Source(key, *v);
    ASSERT_NE(source.code.find("static constexpr int vec_a = 8;"), std::string::npos);
    const std::string cubin = CompileAll({source}).front();
    ASSERT_FALSE(cubin.empty());
    // The promise kept: correct.
    EXPECT_LE(Error(source, cubin, p), Tolerance(B)) << source.entry;
    // Broken: lda is still a whole number of 4-byte words, no longer of 16-byte vectors.
    EXPECT_EXIT(
        {
          runtime::DeviceExecutor& ex = *rig_->executor;
          if (testing::LoadCubin(*rig_, cubin, source.entry)) std::exit(1);
          runtime::KernelArguments args = tuner::UploadProblem(ex, p.inputs, p.encoded);
          for (int i = 0; i < 3; ++i) {
            args.grid[i] = static_cast<uint32_t>(source.launch.grid(i));
            args.block[i] = static_cast<uint32_t>(source.launch.block(i));
          }
          args.shared_memory_bytes = static_cast<uint32_t>(source.launch.shared_memory_bytes());
          args.ints["lda"] += 2;
          ex.Launch(args);
          std::exit(0);
        },
        ::testing::ExitedWithCode(runtime::cuda::CudaExecutor::kStickyErrorExitCode),
        "CUDA_ERROR_(ILLEGAL_INSTRUCTION|LAUNCH_FAILED)")
        << source.entry;
  }
}

}  // namespace
}  // namespace tiletune::kernels
