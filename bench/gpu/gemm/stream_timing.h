#pragma once

#include <functional>

#include "runtime/cuda/cuda_driver_api.h"
#include "runtime/device_executor.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::bench {

// Times work queued on the legacy default stream (where CudaExecutor
// launches and cuBLASLt runs with stream 0) between two driver events: the
// device's own run time, not the host's queueing.
class StreamTimer {
 public:
  // Throws std::runtime_error naming the failed driver call.
  explicit StreamTimer(const runtime::cuda::CudaDriver& driver);
  ~StreamTimer();
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;

  // Seconds between an event recorded before `enqueue` and one after it.
  double Seconds(const std::function<void()>& enqueue);

 private:
  void Check(runtime::cuda::CUresult result, const char* call) const;

  const runtime::cuda::CudaDriver& driver_;
  runtime::cuda::CUevent start_ = nullptr, stop_ = nullptr;
};

// tiletune's measurement protocol, the same for its kernels and the
// vendor's: `warmup` untimed runs, then `repetitions` timed runs each after
// FlushCaches (cold L2, as inside a model); the median is what compares.
struct TimingProtocol {
  int warmup = 3;
  int repetitions = 20;
};
v1::Timing Measure(const TimingProtocol& protocol, runtime::DeviceExecutor& executor,
                   const std::function<double()>& timed_run);

}  // namespace tiletune::bench
