#include "tests/kernels/tt/tile_gpu_test_support.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>

#include <unistd.h>

#include "runtime/cuda/cubin_compiler.h"

namespace tiletune::kernels::testing {

uint16_t ToBf16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float FromBf16(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t ToF16(float value) {
  // Values here are finite and well inside f16's range; subnormal results
  // round through the same integer arithmetic.
  uint32_t u;
  std::memcpy(&u, &value, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const int exponent = static_cast<int>((u >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = (u & 0x7fffffu) | 0x800000u;
  if (exponent >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  const int shift = exponent > 0 ? 13 : 14 - exponent;
  if (shift > 24) return static_cast<uint16_t>(sign);
  const uint32_t half = 1u << (shift - 1), rest = mantissa & ((1u << shift) - 1);
  mantissa >>= shift;
  if (rest > half || (rest == half && (mantissa & 1u))) ++mantissa;
  const uint32_t bits =
      exponent > 0 ? (static_cast<uint32_t>(exponent) << 10) + (mantissa - 0x400u) : mantissa;
  return static_cast<uint16_t>(sign | bits);
}

float FromF16(uint16_t bits) {
  const float sign = (bits & 0x8000u) ? -1.0f : 1.0f;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  return sign * std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
}

size_t DTypeBytes(v1::DType dtype) {
  return dtype == v1::DTYPE_F32 ? 4 : 2;
}

HostTensor RandomTensor(size_t count, v1::DType dtype, uint64_t seed) {
  std::mt19937_64 engine(seed);
  HostTensor t;
  t.dtype = dtype;
  t.bytes.resize(count * DTypeBytes(dtype));
  for (size_t i = 0; i < count; ++i) {
    const float x = static_cast<float>(engine() >> 40) * 0x1p-23f - 1.0f;
    if (dtype == v1::DTYPE_F32) {
      std::memcpy(&t.bytes[4 * i], &x, 4);
    } else {
      const uint16_t bits = dtype == v1::DTYPE_BF16 ? ToBf16(x) : ToF16(x);
      std::memcpy(&t.bytes[2 * i], &bits, 2);
    }
  }
  t.values = Decode(t.bytes, dtype);
  return t;
}

std::vector<double> Decode(const std::vector<unsigned char>& bytes, v1::DType dtype) {
  const size_t count = bytes.size() / DTypeBytes(dtype);
  std::vector<double> values(count);
  for (size_t i = 0; i < count; ++i) {
    if (dtype == v1::DTYPE_F32) {
      float f;
      std::memcpy(&f, &bytes[4 * i], 4);
      values[i] = f;
    } else {
      uint16_t bits;
      std::memcpy(&bits, &bytes[2 * i], 2);
      values[i] = dtype == v1::DTYPE_BF16 ? FromBf16(bits) : FromF16(bits);
    }
  }
  return values;
}

std::optional<CudaRig> OpenCudaRig(std::string* why) {
  CudaRig rig;
  rig.executor = runtime::OpenDeviceExecutor("cuda", why);
  if (!rig.executor) return std::nullopt;
  rig.nvrtc = runtime::OpenNvrtc(why);
  if (!rig.nvrtc) return std::nullopt;
  rig.scratch = std::filesystem::temp_directory_path() /
                ("tiletune_tile_gpu_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(rig.scratch);
  return rig;
}

std::optional<std::string> CompileForSm90(runtime::RtcCompiler& nvrtc, const KernelSource& source,
                                          std::string* log) {
  const runtime::cuda::CubinTarget target = runtime::cuda::CubinTargetFor(source, "sm_90");
  const runtime::RtcOutput out =
      nvrtc.Compile(source.code, source.entry + ".cu", source.headers, target.options, target.arch);
  *log = out.log;
  if (!out.ok) return std::nullopt;
  return out.binary;
}

std::optional<std::string> LoadCubin(CudaRig& rig, const std::string& cubin,
                                     const std::string& entry) {
  const std::filesystem::path path = rig.scratch / (entry + ".cubin");
  std::ofstream(path, std::ios::binary) << cubin;
  return rig.executor->Load(path.string(), entry);
}

runtime::DeviceBuffer Upload(runtime::DeviceExecutor& executor, const HostTensor& tensor) {
  runtime::DeviceBuffer buffer = executor.Allocate(tensor.bytes.size());
  executor.CopyIn(buffer, tensor.bytes.data(), tensor.bytes.size());
  return buffer;
}

}  // namespace tiletune::kernels::testing
