// How host kernels spread work over their `threads` parameter: plain
// std::threads started per call, the calling thread doing a share itself.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace tt {

// Splits [0, count) into one contiguous range per thread and runs
// fn(begin, end) on each.
template <class F>
void parallel_ranges(int threads, int64_t count, const F& fn) {
  const int64_t used = std::max<int64_t>(1, std::min<int64_t>(threads, count));
  std::vector<std::thread> workers;
  for (int64_t t = 1; t < used; ++t) {
    workers.emplace_back([&fn, t, used, count] { fn(t * count / used, (t + 1) * count / used); });
  }
  fn(0, count / used);
  for (auto& w : workers) w.join();
}

// Runs fn(task) for every task in [0, tasks), handed out one at a time from
// a shared counter so that a thread finishing early takes more.
template <class F>
void parallel_tasks(int threads, int64_t tasks, const F& fn) {
  std::atomic<int64_t> next{0};
  parallel_ranges(threads, threads, [&](int64_t, int64_t) {
    for (int64_t t = next.fetch_add(1); t < tasks; t = next.fetch_add(1)) fn(t);
  });
}

}  // namespace tt
