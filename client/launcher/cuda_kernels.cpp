#include "client/launcher/cuda_kernels.h"

#include <algorithm>
#include <climits>
#include <stdexcept>

#include "client/launcher/abi_packing.h"
#include "kernels/core/abi_description.h"
#include "runtime/baseline_candidate.h"

namespace tiletune::launcher {
namespace cu = runtime::cuda;
namespace {

// Past this a kernel must opt in to more dynamic shared memory.
constexpr int64_t kDefaultSharedMemoryLimit = 48 << 10;
// The operand alignment cuBLASLt's heuristic assumes unless told otherwise
// (its MIN_ALIGNMENT preferences, which CublasLtGemm leaves at 256 bytes).
constexpr uintptr_t kCublasLtAlignment = 256;

unsigned Dim(const google::protobuf::RepeatedField<int64_t>& dims, int i) {
  return i < dims.size() ? static_cast<unsigned>(dims[i]) : 1;
}

cu::CUcontext RequireCurrent(const CudaContexts& cuda) {
  const cu::CUcontext context = cuda.Current();
  if (!context) {
    throw std::runtime_error(
        "no current CUDA context in this thread: make the device's context current first");
  }
  return context;
}

std::variant<CudaContexts::LoadedKernel, std::string> Load(const cu::CudaDriver& driver,
                                                           const v1::KernelArtifact& artifact,
                                                           const std::string& code) {
  const cu::CudaDriverApi& api = driver.api();
  CudaContexts::LoadedKernel kernel;
  cu::CUdevice device = 0;
  if (const auto r = api.cuCtxGetDevice(&device); r != cu::CUDA_SUCCESS) {
    return driver.Describe(r, "cuCtxGetDevice");
  }
  if (const auto r = api.cuDeviceGetAttribute(&kernel.compute_units,
                                              cu::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
      r != cu::CUDA_SUCCESS) {
    return driver.Describe(r, "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
  }
  cu::CUmodule module = nullptr;
  if (const auto r = api.cuModuleLoadData(&module, code.data()); r != cu::CUDA_SUCCESS) {
    return driver.Describe(r, "cuModuleLoadData(" + artifact.target() + " code)");
  }
  std::string failed;
  if (const auto r = api.cuModuleGetFunction(&kernel.function, module, artifact.entry().c_str());
      r != cu::CUDA_SUCCESS) {
    failed = driver.Describe(r, "cuModuleGetFunction(" + artifact.entry() + ")");
  } else if (const int64_t bytes = artifact.launch().shared_memory_bytes();
             bytes > kDefaultSharedMemoryLimit) {
    const auto set =
        api.cuFuncSetAttribute(kernel.function, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               static_cast<int>(bytes));
    if (set != cu::CUDA_SUCCESS) {
      failed = driver.Describe(
          set, "cuFuncSetAttribute(max dynamic shared memory " + std::to_string(bytes) + " bytes)");
    }
  }
  if (failed.empty()) return kernel;
  api.cuModuleUnload(module);
  return failed;
}

}  // namespace

std::shared_ptr<CudaContexts> CudaContexts::Process(std::string* why) {
  static std::mutex mutex;
  static std::shared_ptr<CudaContexts> process;
  static std::string missing;  // opening is tried once
  std::lock_guard lock(mutex);
  if (!process && missing.empty()) {
    auto driver = cu::CudaDriver::Open(&missing);
    if (driver) {
      if (const auto r = driver->api().cuInit(0); r != cu::CUDA_SUCCESS) {
        missing = driver->Describe(r, "cuInit");
      } else {
        process.reset(new CudaContexts(std::move(driver)));
      }
    }
  }
  if (!process) *why = missing;
  return process;
}

cu::CUcontext CudaContexts::Current() const {
  cu::CUcontext context = nullptr;
  if (driver_->api().cuCtxGetCurrent(&context) != cu::CUDA_SUCCESS) return nullptr;
  return context;
}

std::variant<CudaContexts::LoadedKernel, std::string> CudaContexts::KernelIn(
    cu::CUcontext context, const v1::KernelArtifact& artifact, const std::string& code) {
  std::lock_guard lock(mutex_);
  auto& kernels = contexts_[context].kernels;
  const auto found = kernels.find(artifact.content_hash());
  if (found != kernels.end()) return found->second;
  return kernels[artifact.content_hash()] = Load(*driver_, artifact, code);
}

std::variant<void*, std::string> CudaContexts::WorkspaceIn(cu::CUcontext context,
                                                           cu::CUstream stream) {
  std::lock_guard lock(mutex_);
  auto& workspaces = contexts_[context].workspaces;
  if (const auto found = workspaces.find(stream); found != workspaces.end()) {
    return reinterpret_cast<void*>(found->second);
  }
  cu::CUdeviceptr workspace = 0;
  if (const auto r = driver_->api().cuMemAlloc(&workspace, cu::CublasLtGemm::kWorkspaceBytes);
      r != cu::CUDA_SUCCESS) {
    return driver_->Describe(r, "cuMemAlloc_v2(cuBLASLt workspace)");
  }
  workspaces[stream] = workspace;
  return reinterpret_cast<void*>(workspace);
}

const cu::CublasLtLibrary* CudaContexts::CublasLt(std::string* why) {
  std::lock_guard lock(mutex_);
  if (!cublaslt_ && cublaslt_missing_.empty()) {
    cublaslt_ = cu::CublasLtLibrary::Open(&cublaslt_missing_);
  }
  if (!cublaslt_) *why = cublaslt_missing_;
  return cublaslt_.get();
}

std::optional<std::string> UnlaunchableGeometry(const v1::LaunchGeometry& launch) {
  for (const auto& [name, dims] : {std::pair{"grid", &launch.grid()}, {"block", &launch.block()}}) {
    if (dims->size() > 3)
      return std::string(name) + " of " + std::to_string(dims->size()) + " dims";
    for (int64_t size : *dims) {
      if (size < 1 || size > INT_MAX) return std::string(name) + " size " + std::to_string(size);
    }
  }
  if (launch.shared_memory_bytes() < 0 || launch.shared_memory_bytes() > INT_MAX) {
    return "shared memory of " + std::to_string(launch.shared_memory_bytes()) + " bytes";
  }
  if (launch.blocks_per_compute_unit() < 0) {
    return "blocks_per_compute_unit " + std::to_string(launch.blocks_per_compute_unit());
  }
  return std::nullopt;
}

std::variant<std::shared_ptr<const CublasLtGemmCall>, std::string> CublasLtGemmCall::For(
    std::shared_ptr<CudaContexts> cuda, const v1::KernelKey& key) {
  v1::KernelAbi abi;
  cu::CublasLtGemmSpec spec;
  try {
    abi = kernels::DescribeLaunchAbi(key, v1::KernelAbi::PASSING_BY_VALUE);
    spec = cu::CublasLtGemmSpecOf(key);
  } catch (const std::exception& e) {
    return std::string("cuBLASLt cannot run the key: ") + e.what();
  }
  if (spec.epilogue_pass) {
    return std::string("cuBLASLt's epilogue cannot compute the key's ") +
           (spec.gated ? "gate" : "chain") +
           " (the daemon's baseline adds an epilogue pass, which this launcher does not)";
  }
  // Run checks cuBLASLt's own, stricter alignment.
  abi.set_tensor_alignment(1);
  std::string why;
  const cu::CublasLtLibrary* library = cuda->CublasLt(&why);
  if (!library) return "cuBLASLt is not available: " + why;
  return std::shared_ptr<const CublasLtGemmCall>(
      new CublasLtGemmCall(std::move(cuda), *library, spec, std::move(abi)));
}

std::optional<v1::VendorAlgorithm> FallbackAlgorithmOf(const v1::Record& record) {
  if (record.has_baseline_algorithm() && !record.baseline_algorithm().epilogue_pass()) {
    return record.baseline_algorithm();
  }
  const v1::BaselineCandidate* fastest =
      runtime::FastestCandidate(record.baseline_candidates(), [](const v1::BaselineCandidate& c) {
        return c.has_algorithm() && !c.algorithm().epilogue_pass();
      });
  if (!fastest) return std::nullopt;
  return fastest->algorithm();
}

LaunchOutcome CublasLtGemmCall::Run(void* stream, const LaunchArgs& args, const std::string& reason,
                                    const std::optional<v1::VendorAlgorithm>& algorithm) const {
  PackArgs(abi_, args);  // the checks a kernel of the key makes, so both handles take the same
  const auto& fold = spec_.fold;
  const auto chain_tensor = [&](const std::optional<int>& slot) {
    return slot ? args.chain_tensors.at(*slot) : nullptr;
  };
  cu::CublasLtOperands operands;
  operands.a = args.tensors.at("a");
  operands.b = args.tensors.at("b");
  operands.d = const_cast<void*>(args.tensors.at("c"));
  operands.residual = chain_tensor(fold.residual_op);
  operands.alpha = fold.scale_op ? args.chain_scalars.at(*fold.scale_op) : 1.0f;
  const void* bias = chain_tensor(fold.bias_op);
  for (const auto& [name, address] : {std::pair{"a", operands.a},
                                      {"b", operands.b},
                                      {"c", static_cast<const void*>(operands.d)},
                                      {"the residual", operands.residual}}) {
    if (reinterpret_cast<uintptr_t>(address) % kCublasLtAlignment != 0) {
      return {Runner::kNotHandled, reason + "; but cuBLASLt's plan takes operands aligned to " +
                                       std::to_string(kCublasLtAlignment) + " bytes and " + name +
                                       " is not: run your own"};
    }
  }
  const cu::CUcontext context = RequireCurrent(*cuda_);
  const auto cu_stream = static_cast<cu::CUstream>(stream);
  const auto workspace = cuda_->WorkspaceIn(context, cu_stream);
  if (const auto* why = std::get_if<std::string>(&workspace)) {
    return {Runner::kNotHandled, reason + "; but " + *why};
  }
  operands.workspace = std::get<void*>(workspace);
  std::lock_guard lock(mutex_);
  const cu::CublasLtGemm* ran = nullptr;
  try {
    auto& plan = plans_[{context, algorithm ? algorithm->algo() : std::string()}];
    if (!plan || plan->bias() != bias) {
      plan = std::make_unique<cu::CublasLtGemm>(
          library_, spec_, bias,
          cu::CublasLtAlgorithmChoice{.chosen = algorithm ? &*algorithm : nullptr});
    }
    plan->Enqueue(operands, cu_stream);
    ran = plan.get();
  } catch (const std::exception& e) {
    return {Runner::kNotHandled, reason + "; but cuBLASLt failed: " + e.what()};
  }
  return {Runner::kVendorFallback, reason + "; ran " + ran->algorithm().description()};
}

TunedCudaKernel::TunedCudaKernel(std::shared_ptr<CudaContexts> cuda, v1::KernelArtifact artifact,
                                 std::string code, std::string reason,
                                 std::shared_ptr<const CublasLtGemmCall> fallback,
                                 std::vector<cu::PlannedTensorMap> tensor_maps,
                                 std::optional<v1::VendorAlgorithm> fallback_algorithm)
    : KernelHandle(Runner::kTuned, std::move(reason)),
      cuda_(std::move(cuda)),
      artifact_(std::move(artifact)),
      code_(std::move(code)),
      fallback_(std::move(fallback)),
      tensor_maps_(std::move(tensor_maps)),
      fallback_algorithm_(std::move(fallback_algorithm)) {}

std::optional<std::string> TunedCudaKernel::LoadIntoCurrentContext() const {
  const cu::CUcontext context = cuda_->Current();
  if (!context) return std::nullopt;  // loaded where it is first launched
  const auto loaded = cuda_->KernelIn(context, artifact_, code_);
  if (const auto* why = std::get_if<std::string>(&loaded)) return *why;
  return std::nullopt;
}

LaunchOutcome TunedCudaKernel::Launch(void* stream, const LaunchArgs& args) const {
  PackedArgs packed = PackArgs(artifact_.abi(), args, artifact_.launch().argument_bytes());
  // Encoded per launch: a map holds its tensor's address.
  if (auto refusal = cu::EncodeTensorMaps(cuda_->driver(), tensor_maps_, packed.data())) {
    throw LaunchError(refusal->tensor, refusal->message);
  }
  const cu::CUcontext context = RequireCurrent(*cuda_);
  const auto loaded = cuda_->KernelIn(context, artifact_, code_);
  if (const auto* why = std::get_if<std::string>(&loaded)) {
    const std::string reason = "the tuned kernel does not load in this context: " + *why;
    if (fallback_) return fallback_->Run(stream, args, reason, fallback_algorithm_);
    return {Runner::kNotHandled, reason};
  }
  const auto& kernel = std::get<CudaContexts::LoadedKernel>(loaded);
  const v1::LaunchGeometry& launch = artifact_.launch();
  unsigned grid_x = Dim(launch.grid(), 0);
  if (launch.blocks_per_compute_unit() > 0) {
    // Persistent: its blocks stride over the work.
    const int64_t resident = int64_t{launch.blocks_per_compute_unit()} * kernel.compute_units;
    grid_x = static_cast<unsigned>(std::clamp<int64_t>(resident, 1, grid_x));
  }
  void* params[] = {packed.data()};
  const cu::CudaDriver& driver = cuda_->driver();
  const auto r = driver.api().cuLaunchKernel(kernel.function, grid_x, Dim(launch.grid(), 1),
                                             Dim(launch.grid(), 2), Dim(launch.block(), 0),
                                             Dim(launch.block(), 1), Dim(launch.block(), 2),
                                             static_cast<unsigned>(launch.shared_memory_bytes()),
                                             static_cast<cu::CUstream>(stream), params, nullptr);
  if (r != cu::CUDA_SUCCESS) {
    throw std::runtime_error(driver.Describe(r, "cuLaunchKernel(" + artifact_.entry() + ")"));
  }
  return {Runner::kTuned, reason()};
}

}  // namespace tiletune::launcher
