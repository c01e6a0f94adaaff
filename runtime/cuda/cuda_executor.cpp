#include "runtime/cuda/cuda_executor.h"
#include "runtime/packed_kernel_args.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <new>
#include <stdexcept>

#include "kernels/ops/gemm/cublaslt_baseline.h"
#include "runtime/cuda/tensor_map.h"

namespace tiletune::runtime::cuda {
namespace {

// Dynamic shared memory every launch may use without opting in.
constexpr unsigned kDefaultSharedMemoryLimit = 48 * 1024;

// The L2 flush: reads a zeroed buffer with 16-byte loads over a grid-stride
// loop, so the L2 ends up holding only clean lines of it; a timed kernel
// then starts with no operand cached and no dirty line of earlier work to
// write back (a memset flush leaves the L2 full of dirty lines, whose write
// back a timed memory-bound kernel would pay for). The buffer holds zeros,
// so the store to `sink` never happens, but ptxas cannot know that and keeps
// every load. PTX, loaded by the driver's JIT: the worker carries no
// compiler.
constexpr char kL2ReadSweepPtx[] = R"ptx(.version 7.0
.target sm_75
.address_size 64

.visible .entry tiletune_l2_read_sweep(
  .param .u64 buf,
  .param .u64 words,
  .param .u64 sink)
{
  .reg .pred %p<3>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<8>;

  ld.param.u64 %rd1, [buf];
  ld.param.u64 %rd2, [words];
  ld.param.u64 %rd3, [sink];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd3, %rd3;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  cvt.u64.u32 %rd4, %r3;
  mad.wide.u32 %rd4, %r1, %r2, %rd4;
  mul.wide.u32 %rd5, %r4, %r2;
  mov.u32 %r5, 0;
$Lloop:
  setp.ge.u64 %p1, %rd4, %rd2;
  @%p1 bra $Ldone;
  shl.b64 %rd6, %rd4, 4;
  add.s64 %rd7, %rd1, %rd6;
  ld.global.v4.u32 {%r6, %r7, %r8, %r9}, [%rd7];
  xor.b32 %r5, %r5, %r6;
  xor.b32 %r5, %r5, %r7;
  xor.b32 %r5, %r5, %r8;
  xor.b32 %r5, %r5, %r9;
  add.s64 %rd4, %rd4, %rd5;
  bra.uni $Lloop;
$Ldone:
  setp.ne.u32 %p2, %r5, 1;
  @%p2 bra $Lend;
  st.global.u32 [%rd3], %r5;
$Lend:
  ret;
}
)ptx";
constexpr char kL2ReadSweepEntry[] = "tiletune_l2_read_sweep";
// Named once here, not built into a string at every flush of the timing loop.
const std::string kL2ReadSweepLaunch = std::string("cuLaunchKernel(") + kL2ReadSweepEntry + ")";
constexpr unsigned kL2ReadSweepThreads = 256;
constexpr int kL2ReadSweepBlocksPerSm = 8;

CUdeviceptr Address(const DeviceBuffer& buffer) {
  return reinterpret_cast<CUdeviceptr>(buffer.ptr);
}

}  // namespace

std::unique_ptr<CudaExecutor> CudaExecutor::Open(std::string* why) {
  auto driver = CudaDriver::Open(why);
  if (!driver) return nullptr;
  const CudaDriverApi& api = driver->api();
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (const CUresult r = api.cuInit(0); r != CUDA_SUCCESS) {
    *why = driver->Describe(r, "cuInit");
    return nullptr;
  }
  if (const CUresult r = api.cuDeviceGet(&device, 0); r != CUDA_SUCCESS) {
    *why = driver->Describe(r, "cuDeviceGet(0)");
    return nullptr;
  }
  if (const CUresult r = api.cuDevicePrimaryCtxRetain(&context, device); r != CUDA_SUCCESS) {
    *why = driver->Describe(r, "cuDevicePrimaryCtxRetain");
    return nullptr;
  }
  // From here the destructor releases whatever Prepare set up.
  std::unique_ptr<CudaExecutor> executor(new CudaExecutor(std::move(driver), device, context));
  if (auto error = executor->Prepare()) {
    *why = *error;
    return nullptr;
  }
  return executor;
}

CudaExecutor::CudaExecutor(std::unique_ptr<CudaDriver> driver, CUdevice device, CUcontext context)
    : driver_(std::move(driver)), api_(driver_->api()), device_(device), context_(context) {}

std::optional<std::string> CudaExecutor::Prepare() {
  if (auto e = Status(api_.cuCtxSetCurrent(context_), "cuCtxSetCurrent")) return e;
  if (auto e = Status(api_.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate")) return e;
  if (auto e = Status(api_.cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate")) return e;
  int l2_bytes = 0;
  if (auto e =
          Status(api_.cuDeviceGetAttribute(&l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device_),
                 "cuDeviceGetAttribute(L2 size)")) {
    return e;
  }
  if (auto e = Status(api_.cuDeviceGetAttribute(&compute_units_,
                                                CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_),
                      "cuDeviceGetAttribute(SM count)")) {
    return e;
  }
  // Twice the L2 so that none of a kernel's lines survive the sweep; at
  // least 1 MiB should a device report no L2.
  flush_bytes_ = std::max<size_t>(2 * static_cast<size_t>(l2_bytes), size_t{1} << 20);
  if (auto e =
          Status(api_.cuMemAlloc(&flush_buffer_, flush_bytes_),
                 "cuMemAlloc_v2(" + std::to_string(flush_bytes_) + " bytes for the L2 flush)")) {
    return e;
  }
  if (auto e = Status(api_.cuMemsetD8(flush_buffer_, 0, flush_bytes_), "cuMemsetD8_v2(L2 flush)")) {
    return e;
  }
  if (auto e = Status(api_.cuModuleLoadData(&flush_module_, kL2ReadSweepPtx),
                      "cuModuleLoadData(L2 read sweep PTX)")) {
    return e;
  }
  return Status(api_.cuModuleGetFunction(&flush_function_, flush_module_, kL2ReadSweepEntry),
                "cuModuleGetFunction(" + std::string(kL2ReadSweepEntry) + ")");
}

CudaExecutor::~CudaExecutor() {
  const auto report = [this](CUresult result, const char* call) {
    if (const auto error = Status(result, call)) std::fprintf(stderr, "%s\n", error->c_str());
  };
  Unload();
  ReleaseAll();
  if (flush_module_) report(api_.cuModuleUnload(flush_module_), "cuModuleUnload");
  if (flush_buffer_) report(api_.cuMemFree(flush_buffer_), "cuMemFree_v2");
  if (cublaslt_workspace_) report(api_.cuMemFree(cublaslt_workspace_), "cuMemFree_v2");
  if (start_) report(api_.cuEventDestroy(start_), "cuEventDestroy_v2");
  if (stop_) report(api_.cuEventDestroy(stop_), "cuEventDestroy_v2");
  report(api_.cuDevicePrimaryCtxRelease(device_), "cuDevicePrimaryCtxRelease_v2");
}

std::optional<std::string> CudaExecutor::Status(CUresult result, const std::string& call) const {
  if (result == CUDA_SUCCESS) return std::nullopt;
  const std::string message = driver_->Describe(result, call);
  if (CudaDriver::IsSticky(result)) {
    std::fprintf(stderr,
                 "tiletune cuda executor: %s; the CUDA context is unusable, ending the worker\n",
                 message.c_str());
    std::fflush(stderr);
    // No destructors or atexit handlers: the driver may hang tearing down a
    // poisoned context.
    ::_exit(kStickyErrorExitCode);
  }
  return message;
}

void CudaExecutor::Check(CUresult result, const std::string& call) const {
  if (auto error = Status(result, call)) throw std::runtime_error(*error);
}

DeviceBuffer CudaExecutor::Allocate(size_t bytes) {
  // The driver rejects empty allocations; an empty buffer needs no memory.
  if (bytes == 0) return {};
  CUdeviceptr address = 0;
  const CUresult result = api_.cuMemAlloc(&address, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) throw std::bad_alloc();
  Check(result, "cuMemAlloc_v2(" + std::to_string(bytes) + " bytes)");
  buffers_.push_back(address);
  return {reinterpret_cast<void*>(address), bytes};
}

void CudaExecutor::ReleaseAll() {
  for (const CUdeviceptr address : buffers_) {
    if (const auto error = Status(api_.cuMemFree(address), "cuMemFree_v2")) {
      std::fprintf(stderr, "%s\n", error->c_str());
    }
  }
  buffers_.clear();
  gate_products_ = {};
}

void CudaExecutor::CopyIn(const DeviceBuffer& dst, const void* src, size_t bytes) {
  if (bytes > dst.bytes) {
    throw std::runtime_error("CopyIn of " + std::to_string(bytes) + " bytes into a buffer of " +
                             std::to_string(dst.bytes));
  }
  if (bytes > 0) Check(api_.cuMemcpyHtoD(Address(dst), src, bytes), "cuMemcpyHtoD_v2");
}

void CudaExecutor::CopyOut(void* dst, const DeviceBuffer& src, size_t bytes) {
  if (bytes > src.bytes) {
    throw std::runtime_error("CopyOut of " + std::to_string(bytes) + " bytes from a buffer of " +
                             std::to_string(src.bytes));
  }
  if (bytes > 0) Check(api_.cuMemcpyDtoH(dst, Address(src), bytes), "cuMemcpyDtoH_v2");
}

std::optional<std::string> CudaExecutor::Load(const std::string& artifact_path,
                                              const std::string& entry) {
  Unload();
  std::ifstream in(artifact_path, std::ios::binary);
  if (!in) return "cannot open " + artifact_path;
  const std::string image{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (image.empty()) return artifact_path + " is empty";
  if (auto error = Status(api_.cuModuleLoadData(&module_, image.data()),
                          "cuModuleLoadData(" + artifact_path + ")")) {
    module_ = nullptr;
    return error;
  }
  if (auto error = Status(api_.cuModuleGetFunction(&function_, module_, entry.c_str()),
                          "cuModuleGetFunction(" + entry + ")")) {
    Unload();
    return "no entry '" + entry + "' in " + artifact_path + ": " + *error;
  }
  entry_ = entry;
  shared_memory_limit_ = kDefaultSharedMemoryLimit;
  return std::nullopt;
}

void CudaExecutor::Unload() {
  if (module_) {
    if (const auto error = Status(api_.cuModuleUnload(module_), "cuModuleUnload")) {
      std::fprintf(stderr, "%s\n", error->c_str());
    }
  }
  module_ = nullptr;
  function_ = nullptr;
  vendor_spec_.reset();
  vendor_plan_.reset();
}

std::optional<std::string> CudaExecutor::LoadVendor(const VendorCall& call) {
  Unload();
  if (call.library != kernels::gemm::kCublasLtName) {
    return "the cuda executor calls " + std::string(kernels::gemm::kCublasLtName) + ", not " +
           call.library;
  }
  CublasLtGemmSpec spec;
  try {
    spec = CublasLtGemmSpecOf(call.key);
  } catch (const std::invalid_argument& e) {
    return std::string("cuBLASLt cannot run the key: ") + e.what();
  }
  // The pass computes the whole chain; without one, cuBLASLt's epilogue must.
  if (!call.pass_entry.empty()) {
    spec = WithEpiloguePass(spec);
  } else if (spec.epilogue_pass) {
    return std::string(
        "cuBLASLt's epilogue cannot compute the chain and no epilogue pass came with the call");
  }
  if (!cublaslt_) {
    std::string why;
    cublaslt_ = CublasLtLibrary::Open(&why);
    if (!cublaslt_) return why;
  }
  if (!cublaslt_workspace_) {
    if (auto error = Status(api_.cuMemAlloc(&cublaslt_workspace_, CublasLtGemm::kWorkspaceBytes),
                            "cuMemAlloc_v2(cuBLASLt workspace)")) {
      cublaslt_workspace_ = 0;
      return error;
    }
  }
  // Last: nothing fails after the pass is loaded.
  if (spec.epilogue_pass) {
    if (auto error = Load(call.pass_artifact_path, call.pass_entry)) return error;
  }
  vendor_spec_ = spec;
  vendor_call_ = call;
  entry_ = call.library + (spec.epilogue_pass ? " + " + call.pass_entry : "");
  return std::nullopt;
}

std::optional<v1::VendorAlgorithm> CudaExecutor::VendorAlgorithmRun() const {
  if (!vendor_plan_) return std::nullopt;
  return vendor_plan_->algorithm();
}

std::optional<std::string> CudaExecutor::PrepareVendor(const KernelArguments& args) {
  const auto& fold = vendor_spec_->fold;
  const void* bias = fold.bias_op ? args.chain_tensors.at(*fold.bias_op).ptr : nullptr;
  if (vendor_spec_->gated) {
    const size_t bytes = CublasLtGemm::GateProductsBytes(*vendor_spec_);
    if (gate_products_.bytes < bytes) {
      try {
        gate_products_ = Allocate(bytes);
      } catch (const std::exception& e) {
        return std::string("the gated baseline's products (") + std::to_string(bytes) +
               " bytes): " + e.what();
      }
    }
  }
  if (vendor_plan_ && vendor_plan_->bias() == bias) return std::nullopt;
  try {
    const CublasLtAlgorithmChoice choice{
        .heuristic_requested = vendor_call_.heuristic_requested,
        .heuristic_index = vendor_call_.heuristic_index,
        .chosen = vendor_call_.chosen ? &*vendor_call_.chosen : nullptr};
    vendor_plan_ = std::make_unique<CublasLtGemm>(*cublaslt_, *vendor_spec_, bias, choice);
  } catch (const std::exception& e) {
    return e.what();
  }
  return std::nullopt;
}

std::optional<std::string> CudaExecutor::EnqueueVendor(const KernelArguments& args) {
  const auto& fold = vendor_spec_->fold;
  CublasLtOperands operands;
  // cuBLASLt serves gemm keys only (CublasLtSpec refuses others).
  operands.a = args.TensorPtr("a");
  operands.b = args.TensorPtr("b");
  operands.residual = fold.residual_op ? args.chain_tensors.at(*fold.residual_op).ptr : nullptr;
  operands.d = args.TensorPtr("c");
  operands.alpha = fold.scale_op ? static_cast<float>(args.chain_scalars.at(*fold.scale_op)) : 1.0f;
  operands.workspace = reinterpret_cast<void*>(cublaslt_workspace_);
  try {
    if (vendor_spec_->gated) {
      vendor_plan_->EnqueueGated(operands, args.TensorPtr("b_up"), gate_products_.ptr);
    } else {
      vendor_plan_->Enqueue(operands);
    }
  } catch (const std::exception& e) {
    return e.what();
  }
  return std::nullopt;
}

std::optional<std::string> CudaExecutor::Configure(const KernelArguments& args,
                                                   PackedKernelArgs* packed) {
  if (vendor_spec_) {
    if (auto error = PrepareVendor(args)) return error;
    if (!vendor_spec_->epilogue_pass) return std::nullopt;
  }
  if (!function_) return std::string("no kernel loaded");
  if (vendor_spec_ && vendor_spec_->gated) {
    // The gated pass reads the products where a kernel reads A.
    KernelArguments pass = args;
    pass.tensors["a"] = gate_products_;
    if (auto error = PackKernelArgs(pass, packed)) return error;
  } else if (auto error = PackKernelArgs(args, packed)) {
    return error;
  }
  if (auto error = EncodeTensorMaps(*driver_, args, *packed)) return entry_ + ": " + *error;
  if (args.shared_memory_bytes <= shared_memory_limit_) return std::nullopt;
  if (auto error =
          Status(api_.cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         static_cast<int>(args.shared_memory_bytes)),
                 "cuFuncSetAttribute(" + entry_ + ", max dynamic shared memory " +
                     std::to_string(args.shared_memory_bytes) + " bytes)")) {
    return error;
  }
  shared_memory_limit_ = args.shared_memory_bytes;
  return std::nullopt;
}

std::optional<std::string> CudaExecutor::Enqueue(const KernelArguments& args,
                                                 PackedKernelArgs& packed) {
  if (vendor_spec_) {
    if (auto error = EnqueueVendor(args)) return error;
    if (!vendor_spec_->epilogue_pass) return std::nullopt;
  }
  void* params[] = {packed.data()};
  return Status(api_.cuLaunchKernel(function_, args.grid[0], args.grid[1], args.grid[2],
                                    args.block[0], args.block[1], args.block[2],
                                    args.shared_memory_bytes, nullptr, params, nullptr),
                "cuLaunchKernel(" + entry_ + ")");
}

std::optional<std::string> CudaExecutor::Launch(const KernelArguments& args) {
  PackedKernelArgs packed;
  if (auto error = Configure(args, &packed)) return error;
  if (auto error = Enqueue(args, packed)) return error;
  return Status(api_.cuCtxSynchronize(), "cuCtxSynchronize after " + entry_);
}

std::optional<std::string> CudaExecutor::TimedLaunch(const KernelArguments& args, double* seconds) {
  // Everything but the launch happens before the start event.
  PackedKernelArgs packed;
  if (auto error = Configure(args, &packed)) return error;
  if (auto error = Status(api_.cuEventRecord(start_, nullptr), "cuEventRecord(start)")) {
    return error;
  }
  if (auto error = Enqueue(args, packed)) return error;
  if (auto error = Status(api_.cuEventRecord(stop_, nullptr), "cuEventRecord(stop)")) {
    return error;
  }
  if (auto error = Status(api_.cuEventSynchronize(stop_), "cuEventSynchronize after " + entry_)) {
    return error;
  }
  float milliseconds = 0;
  if (auto error =
          Status(api_.cuEventElapsedTime(&milliseconds, start_, stop_), "cuEventElapsedTime")) {
    return error;
  }
  *seconds = milliseconds / 1e3;
  return std::nullopt;
}

void CudaExecutor::FlushCaches() {
  // Queued, not waited for: the timed launch behind it is enqueued while the
  // sweep runs, so its start event fires as the sweep ends and the time it
  // measures holds no host launch latency (stream order keeps the two apart).
  CUdeviceptr buffer = flush_buffer_;
  uint64_t words = flush_bytes_ / 16;
  CUdeviceptr sink = flush_buffer_;
  void* params[] = {&buffer, &words, &sink};
  Check(api_.cuLaunchKernel(flush_function_,
                            static_cast<unsigned>(compute_units_ * kL2ReadSweepBlocksPerSm), 1, 1,
                            kL2ReadSweepThreads, 1, 1, 0, nullptr, params, nullptr),
        kL2ReadSweepLaunch);
}

}  // namespace tiletune::runtime::cuda
