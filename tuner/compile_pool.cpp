#include "tuner/compile_pool.h"

#include <memory>

namespace tiletune::tuner {

CompilePool::CompilePool(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Loop(); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    // Queued compiles nobody started are dropped; their promises break, which
    // their (already abandoned) futures report as broken_promise.
    tasks_.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

std::shared_future<runtime::CompileResult> CompilePool::Submit(runtime::Backend& backend,
                                                               kernels::KernelSource source,
                                                               const runtime::DeviceInfo& device,
                                                               runtime::CompileLimits limits) {
  auto task = std::make_shared<std::packaged_task<runtime::CompileResult()>>(
      [&backend, source = std::move(source), device, limits] {
        return backend.Compile(source, device, limits);
      });
  std::shared_future<runtime::CompileResult> result = task->get_future().share();
  {
    std::lock_guard lock(mu_);
    tasks_.emplace_back([task] { (*task)(); });
  }
  cv_.notify_one();
  return result;
}

void CompilePool::Loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (stopping_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace tiletune::tuner
