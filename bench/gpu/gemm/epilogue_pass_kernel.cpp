#include "bench/gpu/gemm/epilogue_pass_kernel.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

#include "runtime/packed_kernel_args.h"

namespace tiletune::bench {

namespace cu = runtime::cuda;

EpiloguePassKernel::EpiloguePassKernel(const cu::CudaDriver& driver,
                                       const kernels::KernelSource& source,
                                       const std::string& cubin_path)
    : driver_(driver), launch_(source.launch), entry_(source.entry) {
  if (launch_.grid_size() != 3 || launch_.block_size() != 3) {
    throw std::runtime_error(entry_ + " has no 3-D launch geometry");
  }
  std::ifstream file(cubin_path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot open " + cubin_path);
  const std::string image{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  const cu::CudaDriverApi& api = driver_.api();
  if (const cu::CUresult r = api.cuModuleLoadData(&module_, image.data()); r != cu::CUDA_SUCCESS) {
    throw std::runtime_error(driver_.Describe(r, "cuModuleLoadData(" + cubin_path + ")"));
  }
  if (const cu::CUresult r = api.cuModuleGetFunction(&function_, module_, entry_.c_str());
      r != cu::CUDA_SUCCESS) {
    api.cuModuleUnload(module_);
    throw std::runtime_error(driver_.Describe(r, "cuModuleGetFunction(" + entry_ + ")"));
  }
}

EpiloguePassKernel::~EpiloguePassKernel() {
  driver_.api().cuModuleUnload(module_);
}

void EpiloguePassKernel::Enqueue(const runtime::KernelArguments& args) const {
  runtime::PackedKernelArgs packed;
  if (auto error = runtime::PackKernelArgs(args, &packed)) throw std::runtime_error(*error);
  void* params[] = {packed.data()};
  const auto dim = [](int64_t v) { return static_cast<unsigned>(v); };
  if (const cu::CUresult r = driver_.api().cuLaunchKernel(
          function_, dim(launch_.grid(0)), dim(launch_.grid(1)), dim(launch_.grid(2)),
          dim(launch_.block(0)), dim(launch_.block(1)), dim(launch_.block(2)),
          static_cast<unsigned>(launch_.shared_memory_bytes()), nullptr, params, nullptr);
      r != cu::CUDA_SUCCESS) {
    throw std::runtime_error(driver_.Describe(r, "cuLaunchKernel(" + entry_ + ")"));
  }
}

}  // namespace tiletune::bench
