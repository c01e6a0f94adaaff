#include "host_executor.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/host/cpu_fingerprint.h"

namespace tiletune::runtime::host {
namespace {

constexpr size_t kCacheLine = 64;

void FlushLine(const char* p) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_clflush(p);
#elif defined(__aarch64__)
  __asm__ __volatile__("dc civac, %0" : : "r"(p) : "memory");
#else
#error "HostExecutor::FlushCaches: no cache-line flush for this architecture"
#endif
}

void FlushFence() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_mfence();
#elif defined(__aarch64__)
  __asm__ __volatile__("dsb ish" : : : "memory");
#endif
}

}  // namespace

HostExecutor::~HostExecutor() {
  Unload();
  ReleaseAll();
}

DeviceBuffer HostExecutor::Allocate(size_t bytes) {
  const size_t rounded = (bytes + kCacheLine - 1) / kCacheLine * kCacheLine;
  void* p = std::aligned_alloc(kCacheLine, rounded == 0 ? kCacheLine : rounded);
  if (!p) throw std::bad_alloc();
  buffers_.push_back({p, bytes});
  return buffers_.back();
}

void HostExecutor::ReleaseAll() {
  for (const auto& b : buffers_) std::free(b.ptr);
  buffers_.clear();
}

void HostExecutor::CopyIn(const DeviceBuffer& dst, const void* src, size_t bytes) {
  std::memcpy(dst.ptr, src, bytes);
}

void HostExecutor::CopyOut(void* dst, const DeviceBuffer& src, size_t bytes) {
  std::memcpy(dst, src.ptr, bytes);
}

std::optional<std::string> HostExecutor::Load(const std::string& artifact_path,
                                              const std::string& entry) {
  Unload();
  library_ = ::dlopen(artifact_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    const char* error = ::dlerror();
    return "cannot load " + artifact_path + ": " + (error ? error : "dlopen failed");
  }
  entry_ = reinterpret_cast<tt_host_entry>(::dlsym(library_, entry.c_str()));
  if (!entry_) {
    Unload();
    return "no entry '" + entry + "' in " + artifact_path;
  }
  entry_name_ = entry;
  return std::nullopt;
}

int HostExecutor::compute_units() const {
  // As the fingerprint counts them, so persistent grids match the class.
  return std::max(1, UsableCpuCount());
}

void HostExecutor::Unload() {
  if (library_) ::dlclose(library_);
  library_ = nullptr;
  entry_ = nullptr;
}

std::optional<std::string> HostExecutor::Call(const PackedKernelArgs& packed) const {
  if (!entry_) return std::string("no kernel loaded");
  if (const int status = entry_(packed.data()); status != 0) {
    return entry_name_ + " returned status " + std::to_string(status);
  }
  return std::nullopt;
}

std::optional<std::string> HostExecutor::Pack(const KernelArguments& args,
                                              PackedKernelArgs* packed) const {
  if (auto refusal = TensorMapsRefusal(backend(), args)) return refusal;
  return PackKernelArgs(args, packed);
}

std::optional<std::string> HostExecutor::Launch(const KernelArguments& args) {
  PackedKernelArgs packed;
  if (auto error = Pack(args, &packed)) return error;
  return Call(packed);
}

std::optional<std::string> HostExecutor::TimedLaunch(const KernelArguments& args, double* seconds) {
  PackedKernelArgs packed;
  if (auto error = Pack(args, &packed)) return error;
  const auto start = std::chrono::steady_clock::now();
  auto error = Call(packed);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return error;
}

void HostExecutor::FlushCaches() {
  for (const auto& b : buffers_) {
    const char* p = static_cast<const char*>(b.ptr);
    for (size_t offset = 0; offset < b.bytes; offset += kCacheLine) FlushLine(p + offset);
  }
  FlushFence();
}

}  // namespace tiletune::runtime::host
