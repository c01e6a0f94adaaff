// The tile library's ops in a test kernel: compiled for sm_90 (NVRTC) and
// gfx90a (hipRTC) wherever those compilers are, and run against host
// references on a CUDA device (skipped without one).
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/source/device_headers.h"
#include "tests/kernels/tt/tile_gpu_test_support.h"
#include "tests/support/gemm_call.h"

namespace tiletune::kernels {
namespace {

// One warp per kernel. x: 32 x 64 bf16 (args.a), row-major.
//  tile_mma_{ab,abt,atb,atbt}: out (32 x 64 f32) = A * B with A 32 x 32 and
//    B 32 x 64 (args.a, args.b) stored as the name says (t: transposed).
//  tile_reduce_{row,col}: out = row_max (32), row_sum (32), col_sum (64),
//    col_max (64) of x, from a row_l / col_l register tile.
//  tile_map: out (32 x 64 f32) = 0.5 * (exp(x - row_max) + v), v a per-column
//    vector (args.b, 64 f32) broadcast down the rows.
//  tile_roundtrip_{row,col}: out (32 x 64 bf16) = x through registers and a
//    second shared tile.
constexpr const char* kTileOpsSource = R"(
#include "ops/gemm/gemm_args.h"
#include "tt/device.h"
#include "tt/tile.h"

namespace {

using tt::bf16;
constexpr int W = tt::arch::lanes;

template <int R, int C>
__device__ tt::gl<bf16> view(const void* p) {
  return tt::gl<bf16>{static_cast<bf16*>(const_cast<void*>(p)), R, C, C};
}

template <int R, int C>
__device__ void stage(tt::st<bf16, R, C>& dst, const void* src) {
  tt::load_async<W, 8>(dst, view<R, C>(src), 0, 0);
  tt::commit();
  tt::wait<0>();
  tt::sync();
}

template <bool AT, bool BT>
__device__ void mma_case(const tt_gemm_args& args) {
  constexpr int M = 32, N = 64, K = 32;
  __shared__ tt::st<bf16, AT ? K : M, AT ? M : K> sa;
  __shared__ tt::st<bf16, BT ? N : K, BT ? K : N> sb;
  stage(sa, args.a);
  stage(sb, args.b);
  tt::rt<float, M, N> acc;
  tt::zero(acc);
  tt::select_t<AT, tt::rt<bf16, K, M, tt::col_l>, tt::rt<bf16, M, K, tt::row_l>> a;
  tt::select_t<BT, tt::rt<bf16, N, K, tt::row_l>, tt::rt<bf16, K, N, tt::col_l>> b;
  tt::load(a, sa, 0, 0);
  tt::load<tt::b_operand>(b, sb, 0, 0);
  if constexpr (AT && BT) {
    tt::mma_AtBt(acc, a, b, acc);
  } else if constexpr (AT) {
    tt::mma_AtB(acc, a, b, acc);
  } else if constexpr (BT) {
    tt::mma_ABt(acc, a, b, acc);
  } else {
    tt::mma_AB(acc, a, b, acc);
  }
  const tt::gl<float> out{static_cast<float*>(args.c), M, N, N};
  tt::store<true>(out, acc, 0, 0, [](float v, long long, long long) { return v; });
}

template <class L>
__device__ void reduce_case(const tt_gemm_args& args) {
  __shared__ tt::st<bf16, 32, 64> sx;
  stage(sx, args.a);
  tt::rt<bf16, 32, 64, L> x;
  tt::load(x, sx, 0, 0);
  tt::rv<32, tt::per_row, L> rmax, rsum;
  tt::rv<64, tt::per_col, L> csum, cmax;
  tt::row_max(rmax, x);
  tt::row_sum(rsum, x);
  tt::col_sum(csum, x);
  tt::col_max(cmax, x);
  __shared__ tt::sv<float, 32> s_rmax, s_rsum;
  __shared__ tt::sv<float, 64> s_csum, s_cmax;
  tt::store(s_rmax, rmax);
  tt::store(s_rsum, rsum);
  tt::store(s_csum, csum);
  tt::store(s_cmax, cmax);
  tt::sync();
  float* out = static_cast<float*>(args.c);
  for (int i = threadIdx.x; i < 32; i += W) {
    out[i] = s_rmax.data[i];
    out[32 + i] = s_rsum.data[i];
  }
  for (int i = threadIdx.x; i < 64; i += W) {
    out[64 + i] = s_csum.data[i];
    out[128 + i] = s_cmax.data[i];
  }
}

__device__ void map_case(const tt_gemm_args& args) {
  __shared__ tt::st<bf16, 32, 64> sx;
  __shared__ tt::sv<float, 64> s_v;
  stage(sx, args.a);
  for (int i = threadIdx.x; i < 64; i += W) s_v.data[i] = static_cast<const float*>(args.b)[i];
  tt::sync();
  tt::rt<bf16, 32, 64> x;
  tt::load(x, sx, 0, 0);
  tt::rv<32, tt::per_row> rmax;
  tt::row_max(rmax, x);
  tt::rv<64, tt::per_col> v;
  tt::load(v, s_v);
  tt::rt<float, 32, 64> y, spread;
  tt::copy(y, x);
  tt::broadcast_col(spread, rmax);
  tt::sub(y, y, spread);
  tt::exp(y, y);
  tt::broadcast_row(spread, v);
  tt::add(y, y, spread);
  tt::map(y, y, [](float e) { return 0.5f * e; });
  const tt::gl<float> out{static_cast<float*>(args.c), 32, 64, 64};
  tt::store<true>(out, y, 0, 0, [](float e, long long, long long) { return e; });
}

template <class L>
__device__ void roundtrip_case(const tt_gemm_args& args) {
  __shared__ tt::st<bf16, 32, 64> sx, sy;
  stage(sx, args.a);
  tt::rt<bf16, 32, 64, L> x;
  tt::load(x, sx, 0, 0);
  tt::store(sy, x, 0, 0);
  tt::sync();
  bf16* out = static_cast<bf16*>(args.c);
  for (int i = threadIdx.x; i < 32 * 64; i += W) out[i] = sy.at(i / 64, i % 64);
}

}  // namespace

extern "C" __global__ void tile_mma_ab(tt_gemm_args args) { mma_case<false, false>(args); }
extern "C" __global__ void tile_mma_abt(tt_gemm_args args) { mma_case<false, true>(args); }
extern "C" __global__ void tile_mma_atb(tt_gemm_args args) { mma_case<true, false>(args); }
extern "C" __global__ void tile_mma_atbt(tt_gemm_args args) { mma_case<true, true>(args); }
extern "C" __global__ void tile_reduce_row(tt_gemm_args args) { reduce_case<tt::row_l>(args); }
extern "C" __global__ void tile_reduce_col(tt_gemm_args args) { reduce_case<tt::col_l>(args); }
extern "C" __global__ void tile_map(tt_gemm_args args) { map_case(args); }
extern "C" __global__ void tile_roundtrip_row(tt_gemm_args args) { roundtrip_case<tt::row_l>(args); }
extern "C" __global__ void tile_roundtrip_col(tt_gemm_args args) { roundtrip_case<tt::col_l>(args); }
)";

KernelSource TileOpsSource(bool hip) {
  KernelSource s;
  s.kernel_name = "tile_ops_test";
  s.entry = "tile_ops";
  s.code = std::string(hip ? "#define TT_HIP 1\n" : "") + kTileOpsSource;
  s.headers = DeviceHeaders();
  s.compile_options = {"-std=c++17"};
  return s;
}

TEST(TileOpsCompile, ForSm90WithNvrtc) {
  std::string why;
  const auto nvrtc = runtime::OpenNvrtc(&why);
  if (!nvrtc) GTEST_SKIP() << "no NVRTC: " << why;
  const KernelSource s = TileOpsSource(false);
  const auto out = nvrtc->Compile(s.code, "tile_ops.cu", s.headers, s.compile_options, "sm_90");
  EXPECT_TRUE(out.ok) << out.log;
  EXPECT_FALSE(out.binary.empty());
}

TEST(TileOpsCompile, ForGfx90aWithHiprtc) {
  std::string why;
  const auto hiprtc = runtime::OpenHiprtc(&why);
  if (!hiprtc) GTEST_SKIP() << "no hipRTC: " << why;
  const KernelSource s = TileOpsSource(true);
  const auto out = hiprtc->Compile(s.code, "tile_ops.hip", s.headers, s.compile_options, "gfx90a");
  EXPECT_TRUE(out.ok) << out.log;
  EXPECT_FALSE(out.binary.empty());
}

// Runs the test kernels on the CUDA device; skips without one.
class TileOpsOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    rig_ = testing::OpenCudaRig(&why);
    if (!rig_) GTEST_SKIP() << "no CUDA device: " << why;
    std::string log;
    const auto cubin = testing::CompileForSm90(*rig_->nvrtc, TileOpsSource(false), &log);
    ASSERT_TRUE(cubin) << log;
    cubin_ = *cubin;
    x_ = testing::RandomTensor(32 * 64, v1::DTYPE_BF16, 7);
  }

  // Runs `entry` on one warp with a = `a`, b = `b`, and returns `out_bytes`
  // of its output.
  std::vector<unsigned char> Run(const std::string& entry, const testing::HostTensor& a,
                                 const testing::HostTensor& b, size_t out_bytes) {
    runtime::DeviceExecutor& ex = *rig_->executor;
    const auto failed = testing::LoadCubin(*rig_, cubin_, entry);
    EXPECT_FALSE(failed) << *failed;
    runtime::KernelArguments args = tiletune::testing::GemmCall(
        testing::Upload(ex, a), testing::Upload(ex, b), ex.Allocate(out_bytes));
    const std::vector<unsigned char> poison(out_bytes, 0xff);  // NaN in every dtype
    ex.CopyIn(args.tensors.at("c"), poison.data(), out_bytes);
    args.block = {32, 1, 1};
    const auto launch_failed = ex.Launch(args);
    EXPECT_FALSE(launch_failed) << *launch_failed;
    std::vector<unsigned char> out(out_bytes);
    ex.CopyOut(out.data(), args.tensors.at("c"), out_bytes);
    ex.ReleaseAll();
    return out;
  }

  std::optional<testing::CudaRig> rig_;
  std::string cubin_;
  testing::HostTensor x_;
};

TEST_F(TileOpsOnGpu, MmaInEveryTransposition) {
  const auto a = testing::RandomTensor(32 * 32, v1::DTYPE_BF16, 11);
  const auto b = testing::RandomTensor(32 * 64, v1::DTYPE_BF16, 12);
  const std::pair<const char*, std::pair<bool, bool>> cases[] = {{"tile_mma_ab", {false, false}},
                                                                 {"tile_mma_abt", {false, true}},
                                                                 {"tile_mma_atb", {true, false}},
                                                                 {"tile_mma_atbt", {true, true}}};
  for (const auto& [entry, transposed] : cases) {
    const auto [at, bt] = transposed;
    const std::vector<double> out = testing::Decode(Run(entry, a, b, 32 * 64 * 4), v1::DTYPE_F32);
    for (int i = 0; i < 32; ++i) {
      for (int j = 0; j < 64; ++j) {
        double ref = 0;
        for (int q = 0; q < 32; ++q) {
          ref += a.values[at ? q * 32 + i : i * 32 + q] * b.values[bt ? j * 32 + q : q * 64 + j];
        }
        ASSERT_NEAR(out[i * 64 + j], ref, 1e-4) << entry << " at " << i << "," << j;
      }
    }
  }
}

TEST_F(TileOpsOnGpu, RowAndColumnReductionsInBothLayouts) {
  const auto unused = testing::RandomTensor(64, v1::DTYPE_F32, 1);
  for (const char* entry : {"tile_reduce_row", "tile_reduce_col"}) {
    const std::vector<double> out = testing::Decode(Run(entry, x_, unused, 192 * 4), v1::DTYPE_F32);
    for (int r = 0; r < 32; ++r) {
      double mx = -1e30, sum = 0;
      for (int c = 0; c < 64; ++c) {
        mx = std::max(mx, x_.values[r * 64 + c]);
        sum += x_.values[r * 64 + c];
      }
      EXPECT_EQ(out[r], mx) << entry << " row_max " << r;
      EXPECT_NEAR(out[32 + r], sum, 1e-4) << entry << " row_sum " << r;
    }
    for (int c = 0; c < 64; ++c) {
      double mx = -1e30, sum = 0;
      for (int r = 0; r < 32; ++r) {
        mx = std::max(mx, x_.values[r * 64 + c]);
        sum += x_.values[r * 64 + c];
      }
      EXPECT_NEAR(out[64 + c], sum, 1e-4) << entry << " col_sum " << c;
      EXPECT_EQ(out[128 + c], mx) << entry << " col_max " << c;
    }
  }
}

TEST_F(TileOpsOnGpu, MapsAndBroadcasts) {
  const auto v = testing::RandomTensor(64, v1::DTYPE_F32, 13);
  const std::vector<double> out =
      testing::Decode(Run("tile_map", x_, v, 32 * 64 * 4), v1::DTYPE_F32);
  for (int r = 0; r < 32; ++r) {
    double mx = -1e30;
    for (int c = 0; c < 64; ++c) mx = std::max(mx, x_.values[r * 64 + c]);
    for (int c = 0; c < 64; ++c) {
      const double ref = 0.5 * (std::exp(x_.values[r * 64 + c] - mx) + v.values[c]);
      ASSERT_NEAR(out[r * 64 + c], ref, 1e-5) << r << "," << c;
    }
  }
}

TEST_F(TileOpsOnGpu, SharedRegisterRoundTripIsExact) {
  const auto unused = testing::RandomTensor(64, v1::DTYPE_F32, 1);
  for (const char* entry : {"tile_roundtrip_row", "tile_roundtrip_col"}) {
    EXPECT_EQ(Run(entry, x_, unused, 32 * 64 * 2), x_.bytes) << entry;
  }
}

}  // namespace
}  // namespace tiletune::kernels
