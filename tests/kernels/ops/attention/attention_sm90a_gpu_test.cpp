// Every variant of the sm_90a attention families on odd problems (lengths
// not a multiple of any block, kv_len 1 and 7, q_len > kv_len under the
// bottom-right causal mask, GQA, BSHD and BHSD, head_dim 64 and 128), run
// on an sm_90 device against a float64 reference of the same bf16 inputs,
// with poisoned outputs; lse too. The test encodes the rank-3 tensor maps
// the kernels read (attention_tma_operand.h) itself. Skips without a CUDA
// driver, an sm_90 device or NVRTC.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "kernels/ops/attention/attention_tma_args.h"
#include "runtime/cuda/cuda_driver_api.h"
#include "runtime/device_executor.h"
#include "runtime/rtc/rtc_compiler.h"
#include "tests/kernels/ops/attention/attention_sm90a_test_kernels.h"
#include "tests/kernels/tt/tile_gpu_test_support.h"

namespace tiletune::kernels::attention {
namespace {

using runtime::cuda::CUdeviceptr;
using runtime::cuda::CUresult;
using testing::Family;
using testing::Problem;

struct Case {
  const char* name;
  Family family;
  Sm90aAttentionProblem problem;
};

const Case kCases[] = {
    {"prefill_gqa_causal_bshd", Family::kTmaWs, Problem(2, 4, 2, 300, 257, 128, true, true, true)},
    {"prefill_gqa_bhsd", Family::kTmaWs, Problem(2, 4, 2, 257, 300, 128, false, false, true)},
    {"prefill_q7_kv1_causal", Family::kTmaWs, Problem(1, 2, 1, 7, 1, 64, true, true, true)},
    {"prefill_q1_kv7", Family::kTmaWs, Problem(1, 2, 2, 1, 7, 64, false, false, false)},
    {"prefill_4097_causal", Family::kTmaWs, Problem(1, 2, 1, 4097, 4097, 128, true, true, true)},
    // Chunked prefill: the queries see the cache before them too (diagonal 743).
    {"prefill_chunk_causal", Family::kTmaWs, Problem(2, 4, 2, 257, 1000, 128, true, false, true)},
    {"prefill_4097_d64", Family::kTmaWs, Problem(1, 3, 3, 4097, 4097, 64, false, false, true)},
    {"decode_q1_kv4097", Family::kDecode, Problem(2, 8, 2, 1, 4097, 128, false, true, true)},
    {"decode_q5_kv7_causal", Family::kDecode, Problem(2, 8, 2, 5, 7, 64, true, false, true)},
    {"decode_q16_causal", Family::kDecode, Problem(1, 4, 1, 16, 1000, 128, true, true, true)},
    {"decode_q1_kv1", Family::kDecode, Problem(1, 2, 2, 1, 1, 64, false, false, true)},
};

// Element strides of one operand: [batch][seq][heads][d] (BSHD) or
// [batch][heads][seq][d] (BHSD), dense.
struct Strides {
  int64_t batch, seq, head;
};
Strides StridesOf(const Sm90aAttentionProblem& p, int64_t heads, int64_t seq) {
  const int64_t d = p.head_dim;
  return p.bshd ? Strides{seq * heads * d, heads * d, d} : Strides{heads * seq * d, d, seq * d};
}

class AttentionSm90aOnGpu : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    std::string why;
    driver_ = runtime::cuda::CudaDriver::Open(&why);
    if (!driver_) GTEST_SKIP() << "no CUDA driver: " << why;
    const auto& api = driver_->api();
    int count = 0;
    if (api.cuInit(0) != 0 || api.cuDeviceGetCount(&count) != 0 || count == 0) {
      GTEST_SKIP() << "no CUDA device";
    }
    int major = 0, minor = 0;
    Check(api.cuDeviceGet(&device_, 0), "cuDeviceGet");
    api.cuDeviceGetAttribute(&major, runtime::cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                             device_);
    api.cuDeviceGetAttribute(&minor, runtime::cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                             device_);
    if (major != 9 || minor != 0) GTEST_SKIP() << "not an sm_90 device";
    Check(api.cuDeviceGetAttribute(&sms_, runtime::cuda::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                   device_),
          "cuDeviceGetAttribute");
    nvrtc_ = runtime::OpenNvrtc(&why);
    if (!nvrtc_) GTEST_SKIP() << "no NVRTC: " << why;
    Check(api.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    Check(api.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  }
  void TearDown() override {
    if (!context_) return;
    for (const CUdeviceptr p : buffers_) driver_->api().cuMemFree(p);
    for (const auto& [entry, module] : modules_) driver_->api().cuModuleUnload(module);
    driver_->api().cuDevicePrimaryCtxRelease(device_);
  }

  void Check(CUresult result, const char* call) {
    ASSERT_EQ(result, runtime::cuda::CUDA_SUCCESS) << driver_->Describe(result, call);
  }

  CUdeviceptr Upload(const std::vector<unsigned char>& bytes) {
    CUdeviceptr p = 0;
    EXPECT_EQ(driver_->api().cuMemAlloc(&p, bytes.size()), 0);
    buffers_.push_back(p);
    EXPECT_EQ(driver_->api().cuMemcpyHtoD(p, bytes.data(), bytes.size()), 0);
    return p;
  }

  // The operand's rank-3 map as attention_tma_operand.h reads it.
  tt_tensor_map Map(CUdeviceptr address, const Sm90aAttentionProblem& p, int64_t heads, int64_t seq,
                    int64_t box_rows) {
    const Strides s = StridesOf(p, heads, seq);
    const uint64_t dims[3] = {static_cast<uint64_t>(p.bshd ? heads * p.head_dim : p.head_dim),
                              static_cast<uint64_t>(seq),
                              static_cast<uint64_t>(p.bshd ? p.batch : p.batch * heads)};
    const uint64_t strides[2] = {static_cast<uint64_t>(s.seq * 2),
                                 static_cast<uint64_t>((p.bshd ? s.batch : s.head) * 2)};
    const uint32_t box[3] = {64, static_cast<uint32_t>(box_rows), 1};
    const uint32_t element_strides[3] = {1, 1, 1};
    runtime::cuda::CUtensorMap map{};
    const CUresult r = driver_->api().cuTensorMapEncodeTiled(
        &map, runtime::cuda::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, reinterpret_cast<void*>(address),
        dims, strides, box, element_strides, runtime::cuda::CU_TENSOR_MAP_INTERLEAVE_NONE,
        runtime::cuda::CU_TENSOR_MAP_SWIZZLE_128B,
        runtime::cuda::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        runtime::cuda::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    EXPECT_EQ(r, 0) << driver_->Describe(r, "cuTensorMapEncodeTiled");
    tt_tensor_map out;
    std::memcpy(&out, &map, sizeof(out));
    return out;
  }

  runtime::cuda::CUfunction Function(const testing::AttentionTestKernel& k) {
    auto it = modules_.find(k.source.entry);
    if (it == modules_.end()) {
      std::string log;
      const auto cubin = kernels::testing::CompileForSm90(*nvrtc_, k.source, &log);
      EXPECT_TRUE(cubin.has_value()) << k.source.entry << "\n" << log;
      if (!cubin) return nullptr;
      runtime::cuda::CUmodule module = nullptr;
      const CUresult r = driver_->api().cuModuleLoadData(&module, cubin->data());
      EXPECT_EQ(r, 0) << driver_->Describe(r, "cuModuleLoadData");
      it = modules_.emplace(k.source.entry, module).first;
    }
    runtime::cuda::CUfunction f = nullptr;
    EXPECT_EQ(driver_->api().cuModuleGetFunction(&f, it->second, k.source.entry.c_str()), 0);
    return f;
  }

  std::unique_ptr<runtime::cuda::CudaDriver> driver_;
  std::unique_ptr<runtime::RtcCompiler> nvrtc_;
  runtime::cuda::CUdevice device_ = 0;
  int sms_ = 0;  // what a persistent grid is sized by
  runtime::cuda::CUcontext context_ = nullptr;
  std::vector<CUdeviceptr> buffers_;
  std::map<std::string, runtime::cuda::CUmodule> modules_;
};

INSTANTIATE_TEST_SUITE_P(Odd, AttentionSm90aOnGpu, ::testing::Range(size_t{0}, std::size(kCases)),
                         [](const auto& test) { return std::string(kCases[test.param].name); });

TEST_P(AttentionSm90aOnGpu, EveryVariantMatchesFloat64) {
  const Case& c = kCases[GetParam()];
  const Sm90aAttentionProblem& p = c.problem;
  const int64_t d = p.head_dim, group = p.q_heads / p.kv_heads;
  const Strides qs = StridesOf(p, p.q_heads, p.q_len), ks = StridesOf(p, p.kv_heads, p.kv_len);
  const size_t q_count = p.batch * p.q_heads * p.q_len * d;
  const size_t kv_count = p.batch * p.kv_heads * p.kv_len * d;
  const auto q = kernels::testing::RandomTensor(q_count, v1::DTYPE_BF16, 17 + GetParam());
  const auto k = kernels::testing::RandomTensor(kv_count, v1::DTYPE_BF16, 29 + GetParam());
  const auto v = kernels::testing::RandomTensor(kv_count, v1::DTYPE_BF16, 31 + GetParam());
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));

  // float64 reference on every row of small problems, sampled rows of large.
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < p.q_len; ++i) {
    if (p.q_len <= 320 || i < 3 || i >= p.q_len - 3 || i % 97 == 0) rows.push_back(i);
  }
  const size_t rows_per_head = rows.size();
  std::vector<double> want_o(p.batch * p.q_heads * rows_per_head * d);
  std::vector<double> want_lse(p.batch * p.q_heads * rows_per_head);
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t h = 0; h < p.q_heads; ++h) {
      const int64_t g = h / group;
      for (size_t ri = 0; ri < rows_per_head; ++ri) {
        const int64_t i = rows[ri];
        std::vector<double> w(p.kv_len, 0.0);
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < p.kv_len; ++j) {
          if (p.causal && j > i + p.kv_len - p.q_len) continue;
          double s = 0;
          for (int64_t e = 0; e < d; ++e) {
            s += q.values[b * qs.batch + h * qs.head + i * qs.seq + e] *
                 k.values[b * ks.batch + g * ks.head + j * ks.seq + e];
          }
          w[j] = s * scale;
          m = std::max(m, w[j]);
        }
        double l = 0;
        for (int64_t j = 0; j < p.kv_len; ++j) {
          const bool seen = !(p.causal && j > i + p.kv_len - p.q_len);
          w[j] = seen ? std::exp(w[j] - m) : 0.0;
          l += w[j];
        }
        const size_t row = (b * p.q_heads + h) * rows_per_head + ri;
        want_lse[row] = l > 0 ? m + std::log(l) : -std::numeric_limits<double>::infinity();
        for (int64_t e = 0; e < d; ++e) {
          double o = 0;
          for (int64_t j = 0; j < p.kv_len; ++j) {
            o += w[j] * v.values[b * ks.batch + g * ks.head + j * ks.seq + e];
          }
          want_o[row * d + e] = l > 0 ? o / l : 0.0;
        }
      }
    }
  }

  const CUdeviceptr dq = Upload(q.bytes), dk = Upload(k.bytes), dv = Upload(v.bytes);
  const std::vector<unsigned char> poison_o(q_count * 2, 0xff);
  const std::vector<unsigned char> poison_lse(p.batch * p.q_heads * p.q_len * 4, 0xff);
  const CUdeviceptr d_o = Upload(poison_o), d_lse = Upload(poison_lse);

  const auto kernels = testing::TestKernels(c.family, p);
  ASSERT_FALSE(kernels.empty());
  for (const auto& kernel : kernels) {
    const std::string name = kernel.source.entry;
    ASSERT_EQ(driver_->api().cuMemcpyHtoD(d_o, poison_o.data(), poison_o.size()), 0);
    ASSERT_EQ(driver_->api().cuMemcpyHtoD(d_lse, poison_lse.data(), poison_lse.size()), 0);
    tt_attention_tma_args args;
    std::memset(&args, 0, sizeof(args));
    tt_attention_args& a = args.attention;
    a.q = reinterpret_cast<const void*>(dq);
    a.k = reinterpret_cast<const void*>(dk);
    a.v = reinterpret_cast<const void*>(dv);
    a.o = reinterpret_cast<void*>(d_o);
    a.lse = p.write_lse ? reinterpret_cast<void*>(d_lse) : nullptr;
    a.batch = p.batch;
    a.q_heads = p.q_heads;
    a.kv_heads = p.kv_heads;
    a.q_len = p.q_len;
    a.kv_len = p.kv_len;
    a.head_dim = d;
    a.q_batch_stride = a.o_batch_stride = qs.batch;
    a.q_seq_stride = a.o_seq_stride = qs.seq;
    a.q_head_stride = a.o_head_stride = qs.head;
    a.k_batch_stride = a.v_batch_stride = ks.batch;
    a.k_seq_stride = a.v_seq_stride = ks.seq;
    a.k_head_stride = a.v_head_stride = ks.head;
    a.scale = static_cast<float>(scale);
    const Variant& var = kernel.variant;
    args.q_map = Map(dq, p, p.q_heads, p.q_len, 64);
    args.k_map = Map(dk, p, p.kv_heads, p.kv_len, var.at("block_k"));
    args.v_map = Map(dv, p, p.kv_heads, p.kv_len, var.at("block_k"));

    const runtime::cuda::CUfunction f = Function(kernel);
    ASSERT_NE(f, nullptr) << name;
    Check(driver_->api().cuFuncSetAttribute(
              f, runtime::cuda::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
              static_cast<int>(kernel.shared_bytes)),
          "cuFuncSetAttribute");
    // As the worker launches: the source's grid, a persistent one sized
    // for this device's SMs.
    runtime::KernelArguments geometry;
    runtime::SetLaunchGeometry(kernel.source.launch, sms_, geometry);
    void* params[] = {&args};
    Check(driver_->api().cuLaunchKernel(f, geometry.grid[0], geometry.grid[1], geometry.grid[2],
                                        static_cast<unsigned>(kernel.threads), 1, 1,
                                        static_cast<unsigned>(kernel.shared_bytes), nullptr, params,
                                        nullptr),
          "cuLaunchKernel");
    Check(driver_->api().cuCtxSynchronize(), "cuCtxSynchronize");

    std::vector<unsigned char> o_bytes(poison_o.size());
    std::vector<float> lse(p.batch * p.q_heads * p.q_len);
    ASSERT_EQ(driver_->api().cuMemcpyDtoH(o_bytes.data(), d_o, o_bytes.size()), 0);
    ASSERT_EQ(driver_->api().cuMemcpyDtoH(lse.data(), d_lse, lse.size() * 4), 0);
    const std::vector<double> got = kernels::testing::Decode(o_bytes, v1::DTYPE_BF16);
    int reported = 0;
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t h = 0; h < p.q_heads; ++h) {
        for (size_t ri = 0; ri < rows_per_head; ++ri) {
          const int64_t i = rows[ri];
          const size_t row = (b * p.q_heads + h) * rows_per_head + ri;
          for (int64_t e = 0; e < d; ++e) {
            const double want = want_o[row * d + e];
            const double have = got[b * qs.batch + h * qs.head + i * qs.seq + e];
            // bf16 output and bf16 P: about 2^-8 relative, plus the sum's.
            const bool ok = std::fabs(have - want) <= 1e-2 + 1e-2 * std::fabs(want);
            if (!ok && reported++ < 5) {
              ADD_FAILURE() << name << " o[b" << b << "][h" << h << "][i" << i << "][" << e
                            << "] = " << have << ", want " << want;
            }
          }
          if (!p.write_lse) continue;
          const double want = want_lse[row];
          const double have = lse[(b * p.q_heads + h) * p.q_len + i];
          const bool ok = std::isinf(want)
                              ? have == want
                              : std::fabs(have - want) <= 2e-3 + 1e-4 * std::fabs(want);
          if (!ok && reported++ < 5) {
            ADD_FAILURE() << name << " lse[b" << b << "][h" << h << "][i" << i << "] = " << have
                          << ", want " << want;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tiletune::kernels::attention
