#include "bench/gpu/gemm/stream_timing.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "tuner/worker/timing_summary.h"

namespace tiletune::bench {

namespace cu = runtime::cuda;

StreamTimer::StreamTimer(const cu::CudaDriver& driver) : driver_(driver) {
  Check(driver_.api().cuEventCreate(&start_, cu::CU_EVENT_DEFAULT), "cuEventCreate");
  if (const cu::CUresult r = driver_.api().cuEventCreate(&stop_, cu::CU_EVENT_DEFAULT);
      r != cu::CUDA_SUCCESS) {
    driver_.api().cuEventDestroy(start_);
    Check(r, "cuEventCreate");
  }
}

StreamTimer::~StreamTimer() {
  driver_.api().cuEventDestroy(stop_);
  driver_.api().cuEventDestroy(start_);
}

void StreamTimer::Check(cu::CUresult result, const char* call) const {
  if (result != cu::CUDA_SUCCESS) throw std::runtime_error(driver_.Describe(result, call));
}

double StreamTimer::Seconds(const std::function<void()>& enqueue) {
  const cu::CudaDriverApi& api = driver_.api();
  Check(api.cuEventRecord(start_, nullptr), "cuEventRecord(start)");
  enqueue();
  Check(api.cuEventRecord(stop_, nullptr), "cuEventRecord(stop)");
  Check(api.cuEventSynchronize(stop_), "cuEventSynchronize");
  float milliseconds = 0;
  Check(api.cuEventElapsedTime(&milliseconds, start_, stop_), "cuEventElapsedTime");
  return milliseconds * 1e-3;
}

v1::Timing Measure(const TimingProtocol& protocol, runtime::DeviceExecutor& executor,
                   const std::function<double()>& timed_run) {
  for (int i = 0; i < protocol.warmup; ++i) timed_run();
  std::vector<double> seconds;
  for (int i = 0; i < protocol.repetitions; ++i) {
    executor.FlushCaches();
    seconds.push_back(timed_run());
  }
  return tuner::SummarizeTimes(std::move(seconds));
}

}  // namespace tiletune::bench
