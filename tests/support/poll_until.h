#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace tiletune::testing {

// How long a test waits for an event or a state it expects: only a hang
// reaches it, even on a machine loaded by other work, and it stays short of
// ctest's 600 s per test. It costs nothing when things go well.
inline constexpr std::chrono::seconds kEventCeiling{300};

inline std::chrono::steady_clock::time_point In(std::chrono::seconds seconds) {
  return std::chrono::steady_clock::now() + seconds;
}

// Asks `done` every `interval` until it holds or `until` passes; whether it
// held.
inline bool PollUntil(const std::function<bool()>& done,
                      std::chrono::steady_clock::time_point until = In(kEventCeiling),
                      std::chrono::milliseconds interval = std::chrono::milliseconds(20)) {
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(interval);
  }
  return true;
}

}  // namespace tiletune::testing
