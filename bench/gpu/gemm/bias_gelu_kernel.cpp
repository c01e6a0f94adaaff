#include "bench/gpu/gemm/bias_gelu_kernel.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace tiletune::bench {
namespace {

namespace cu = runtime::cuda;

constexpr const char* kEntry = "tt_bench_bias_gelu_tanh";
constexpr unsigned kThreads = 256;

constexpr const char* kCode = R"(
__device__ float bf16_to_float(unsigned short bits) {
  return __uint_as_float(static_cast<unsigned>(bits) << 16);
}
__device__ unsigned short float_to_bf16(float value) {
  const unsigned bits = __float_as_uint(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((bits >> 16) | 0x40u);
  return static_cast<unsigned short>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}
extern "C" __global__ void tt_bench_bias_gelu_tanh(unsigned short* c, const unsigned short* bias,
                                                   long long elements, long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < elements;
       i += stride) {
    const float v = bf16_to_float(c[i]) + bf16_to_float(bias[i % n]);
    const float g = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    c[i] = float_to_bf16(g);
  }
}
)";

}  // namespace

kernels::KernelSource BiasGeluSource() {
  kernels::KernelSource source;
  source.kernel_name = "bench_bias_gelu_tanh";
  source.entry = kEntry;
  source.code = kCode;
  source.launch.add_block(kThreads);
  return source;
}

BiasGeluKernel::BiasGeluKernel(const cu::CudaDriver& driver, const std::string& cubin_path)
    : driver_(driver) {
  std::ifstream file(cubin_path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot open " + cubin_path);
  const std::string image{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  const cu::CudaDriverApi& api = driver_.api();
  if (const cu::CUresult r = api.cuModuleLoadData(&module_, image.data()); r != cu::CUDA_SUCCESS) {
    throw std::runtime_error(driver_.Describe(r, "cuModuleLoadData(" + cubin_path + ")"));
  }
  if (const cu::CUresult r = api.cuModuleGetFunction(&function_, module_, kEntry);
      r != cu::CUDA_SUCCESS) {
    api.cuModuleUnload(module_);
    throw std::runtime_error(
        driver_.Describe(r, std::string("cuModuleGetFunction(") + kEntry + ")"));
  }
}

BiasGeluKernel::~BiasGeluKernel() {
  driver_.api().cuModuleUnload(module_);
}

void BiasGeluKernel::Enqueue(void* c, const void* bias, int64_t m, int64_t n) const {
  auto c_address = reinterpret_cast<cu::CUdeviceptr>(c);
  auto bias_address = reinterpret_cast<cu::CUdeviceptr>(bias);
  long long elements = m * n, columns = n;
  void* params[] = {&c_address, &bias_address, &elements, &columns};
  // Enough blocks to fill any GPU several times over; the loop strides the rest.
  const auto blocks = static_cast<unsigned>(
      std::min<int64_t>((elements + kThreads - 1) / kThreads, int64_t{1} << 16));
  if (const cu::CUresult r = driver_.api().cuLaunchKernel(function_, blocks, 1, 1, kThreads, 1, 1,
                                                          0, nullptr, params, nullptr);
      r != cu::CUDA_SUCCESS) {
    throw std::runtime_error(driver_.Describe(r, std::string("cuLaunchKernel(") + kEntry + ")"));
  }
}

}  // namespace tiletune::bench
