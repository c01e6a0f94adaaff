#include "runtime/hip/hip_executor.h"
#include "runtime/packed_kernel_args.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <new>
#include <sstream>
#include <stdexcept>

namespace tiletune::runtime::hip {
namespace {

// Errors after which HIP refuses every further call in this process. Values
// from <hip/hip_runtime_api.h>; hipErrorLaunchFailure is HIP 6's number.
bool IsSticky(hipError_t error) {
  switch (error) {
    case 700:  // hipErrorIllegalAddress
    case 702:  // hipErrorLaunchTimeOut
    case 709:  // hipErrorContextIsDestroyed
    case 710:  // hipErrorAssert
    case 719:  // hipErrorLaunchFailure
      return true;
    default: return false;
  }
}

std::string Geometry(const KernelArguments& args) {
  return "grid " + std::to_string(args.grid[0]) + "x" + std::to_string(args.grid[1]) + "x" +
         std::to_string(args.grid[2]) + ", block " + std::to_string(args.block[0]) + "x" +
         std::to_string(args.block[1]) + "x" + std::to_string(args.block[2]) + ", " +
         std::to_string(args.shared_memory_bytes) + " B shared";
}

}  // namespace

std::unique_ptr<HipExecutor> HipExecutor::Open(std::string* why) {
  auto api = OpenHipRuntimeApi(why);
  if (!api) return nullptr;
  const auto failed = [&](const char* call, hipError_t error) {
    if (error == hipSuccess) return false;
    *why = api->Describe(call, error);
    return true;
  };
  int l2_bytes = 0, max_shared = 0, compute_units = 0;
  if (failed("hipInit", api->hipInit(0)) || failed("hipSetDevice(0)", api->hipSetDevice(0)) ||
      failed("hipDeviceGetAttribute(L2CacheSize)",
             api->hipDeviceGetAttribute(&l2_bytes, hipDeviceAttributeL2CacheSize, 0)) ||
      failed(
          "hipDeviceGetAttribute(MaxSharedMemoryPerBlock)",
          api->hipDeviceGetAttribute(&max_shared, hipDeviceAttributeMaxSharedMemoryPerBlock, 0)) ||
      failed(
          "hipDeviceGetAttribute(MultiprocessorCount)",
          api->hipDeviceGetAttribute(&compute_units, hipDeviceAttributeMultiprocessorCount, 0))) {
    return nullptr;
  }
  if (l2_bytes <= 0) {
    *why = "the device reports no L2 size (hipDeviceAttributeL2CacheSize " +
           std::to_string(l2_bytes) + "): cannot size the cache flush";
    return nullptr;
  }
  hipEvent_t start = nullptr, stop = nullptr;
  if (failed("hipEventCreate", api->hipEventCreate(&start))) return nullptr;
  if (failed("hipEventCreate", api->hipEventCreate(&stop))) {
    api->hipEventDestroy(start);
    return nullptr;
  }
  const size_t flush_bytes = 2 * static_cast<size_t>(l2_bytes);
  return std::unique_ptr<HipExecutor>(
      new HipExecutor(std::move(api), start, stop, flush_bytes, max_shared, compute_units));
}

HipExecutor::HipExecutor(std::unique_ptr<HipRuntimeApi> api, hipEvent_t start, hipEvent_t stop,
                         size_t flush_bytes, int max_shared_memory_bytes, int compute_units)
    : api_(std::move(api)),
      start_(start),
      stop_(stop),
      flush_bytes_(flush_bytes),
      max_shared_memory_bytes_(max_shared_memory_bytes),
      compute_units_(compute_units) {}

HipExecutor::~HipExecutor() {
  Unload();
  ReleaseAll();
  // Teardown errors have no one left to tell.
  if (flush_buffer_) (void)api_->hipFree(flush_buffer_);
  (void)api_->hipEventDestroy(start_);
  (void)api_->hipEventDestroy(stop_);
}

std::optional<std::string> HipExecutor::Failure(const char* call, hipError_t error) const {
  if (error == hipSuccess) return std::nullopt;
  std::string message = api_->Describe(call, error);
  if (IsSticky(error)) {
    std::fprintf(stderr, "tiletune hip executor: %s; the GPU context is lost, exiting\n",
                 message.c_str());
    std::fflush(stderr);
    ::_exit(3);
  }
  return message;
}

void HipExecutor::Require(const char* call, hipError_t error) const {
  if (auto message = Failure(call, error)) throw std::runtime_error(*message);
}

DeviceBuffer HipExecutor::Allocate(size_t bytes) {
  void* p = nullptr;
  // hipMalloc(0) yields no pointer; every buffer gets an address.
  const hipError_t error = api_->hipMalloc(&p, std::max<size_t>(bytes, 1));
  if (error == hipErrorOutOfMemory) throw std::bad_alloc();
  Require("hipMalloc", error);
  buffers_.push_back({p, bytes});
  return buffers_.back();
}

void HipExecutor::ReleaseAll() {
  for (const auto& b : buffers_) {
    if (auto message = Failure("hipFree", api_->hipFree(b.ptr))) {
      std::fprintf(stderr, "tiletune hip executor: %s\n", message->c_str());
    }
  }
  buffers_.clear();
}

void HipExecutor::CopyIn(const DeviceBuffer& dst, const void* src, size_t bytes) {
  // hipMemcpyHtoD only reads `src`; HIP 5.x declares it non-const.
  Require("hipMemcpyHtoD", api_->hipMemcpyHtoD(dst.ptr, const_cast<void*>(src), bytes));
}

void HipExecutor::CopyOut(void* dst, const DeviceBuffer& src, size_t bytes) {
  Require("hipMemcpyDtoH", api_->hipMemcpyDtoH(dst, src.ptr, bytes));
}

std::optional<std::string> HipExecutor::Load(const std::string& artifact_path,
                                             const std::string& entry) {
  Unload();
  std::ifstream in(artifact_path, std::ios::binary);
  if (!in) return "cannot read " + artifact_path;
  std::stringstream image;
  image << in.rdbuf();
  image_ = image.str();
  if (auto error = Failure("hipModuleLoadData", api_->hipModuleLoadData(&module_, image_.data()))) {
    module_ = nullptr;
    Unload();
    return "cannot load " + artifact_path + ": " + *error;
  }
  if (auto error = Failure("hipModuleGetFunction",
                           api_->hipModuleGetFunction(&function_, module_, entry.c_str()))) {
    Unload();
    return "no entry '" + entry + "' in " + artifact_path + ": " + *error;
  }
  entry_ = entry;
  return std::nullopt;
}

void HipExecutor::Unload() {
  if (module_) {
    if (auto message = Failure("hipModuleUnload", api_->hipModuleUnload(module_))) {
      std::fprintf(stderr, "tiletune hip executor: %s\n", message->c_str());
    }
  }
  module_ = nullptr;
  function_ = nullptr;
  image_.clear();
}

std::optional<std::string> HipExecutor::Enqueue(const KernelArguments& args) {
  if (!function_) return std::string("no kernel loaded");
  if (args.shared_memory_bytes > static_cast<uint32_t>(max_shared_memory_bytes_)) {
    return entry_ + ": " + std::to_string(args.shared_memory_bytes) +
           " B of dynamic shared memory exceed the device's " +
           std::to_string(max_shared_memory_bytes_) + " B per block";
  }
  if (auto refusal = TensorMapsRefusal(backend(), args)) return entry_ + ": " + *refusal;
  PackedKernelArgs packed;
  if (auto error = PackKernelArgs(args, &packed)) return entry_ + ": " + *error;
  // AMD GPUs need no opt-in for large dynamic LDS (hipFuncSetAttribute takes
  // a host stub, not a module function, and is not used).
  void* params[] = {packed.data()};
  if (auto error = Failure(
          "hipModuleLaunchKernel",
          api_->hipModuleLaunchKernel(function_, args.grid[0], args.grid[1], args.grid[2],
                                      args.block[0], args.block[1], args.block[2],
                                      args.shared_memory_bytes, nullptr, params, nullptr))) {
    return entry_ + " (" + Geometry(args) + "): " + *error;
  }
  return std::nullopt;
}

std::optional<std::string> HipExecutor::Launch(const KernelArguments& args) {
  if (auto error = Enqueue(args)) return error;
  if (auto error = Failure("hipDeviceSynchronize", api_->hipDeviceSynchronize())) {
    return entry_ + ": " + *error;
  }
  return std::nullopt;
}

std::optional<std::string> HipExecutor::TimedLaunch(const KernelArguments& args, double* seconds) {
  if (auto error = Failure("hipEventRecord", api_->hipEventRecord(start_, nullptr))) return error;
  if (auto error = Enqueue(args)) return error;
  if (auto error = Failure("hipEventRecord", api_->hipEventRecord(stop_, nullptr))) return error;
  if (auto error = Failure("hipEventSynchronize", api_->hipEventSynchronize(stop_))) {
    return entry_ + ": " + *error;
  }
  float milliseconds = 0;
  if (auto error =
          Failure("hipEventElapsedTime", api_->hipEventElapsedTime(&milliseconds, start_, stop_))) {
    return error;
  }
  *seconds = milliseconds / 1e3;
  return std::nullopt;
}

void HipExecutor::FlushCaches() {
  if (!flush_buffer_) Require("hipMalloc", api_->hipMalloc(&flush_buffer_, flush_bytes_));
  Require("hipMemset", api_->hipMemset(flush_buffer_, 0, flush_bytes_));
  Require("hipDeviceSynchronize", api_->hipDeviceSynchronize());
}

}  // namespace tiletune::runtime::hip
