#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/backend.h"

namespace tiletune::tuner {

// A bounded set of threads that compile variants ahead of the benchmark
// worker, so compiling and timing overlap. A session that is cancelled simply
// drops its futures: compiles already running finish in the background and
// land in the compiled-code cache.
class CompilePool {
 public:
  explicit CompilePool(int threads);
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  std::shared_future<runtime::CompileResult> Submit(runtime::Backend& backend,
                                                    kernels::KernelSource source,
                                                    const runtime::DeviceInfo& device,
                                                    runtime::CompileLimits limits);

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tiletune::tuner
