#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace tiletune::launcher {

// What ran, or would run, for a key.
enum class Runner {
  kTuned,           // the daemon's tuned kernel
  kVendorFallback,  // the vendor library this launcher calls itself (cuBLASLt)
  kNotHandled,      // nothing here: the caller runs its own implementation
};

// One call's arguments, by the names of the op's launch ABI struct
// (docs/kernel-abi.md): tensors by field name ("a", "b", "c"), the chain's
// tensors and scalars by chain slot (prologue ops first, then the epilogue
// chain, in key order).
struct LaunchArgs {
  std::map<std::string, const void*> tensors;
  std::map<int, const void*> chain_tensors;
  std::map<int, float> chain_scalars;
  // Integers the key fixes (m, ldc...) are filled in; one given here must
  // equal the key's value.
  std::map<std::string, int64_t> ints;
  // Floats (a norm's eps); the value the daemon validated with when absent.
  std::map<std::string, float> floats;
};

// An argument the kernel cannot take, named before anything is launched.
class LaunchError : public std::invalid_argument {
 public:
  LaunchError(std::string field, const std::string& message)
      : std::invalid_argument(field + ": " + message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

struct LaunchOutcome {
  Runner runner = Runner::kNotHandled;
  std::string reason;
};

// A key resolved for one device: the tuned kernel, the vendor fallback, or
// nothing. Shared and thread-safe; it stays usable after its launcher is gone.
class KernelHandle {
 public:
  virtual ~KernelHandle() = default;

  // What Launch runs, and why (the fallback's cause, or which kernel).
  Runner runner() const { return runner_; }
  const std::string& reason() const { return reason_; }

  // Queues the call on `stream` (a CUstream; null: the legacy default
  // stream) in the caller's current context; host kernels run before it
  // returns and ignore `stream`. The outcome says what ran: the fallback
  // when the tuned kernel cannot be loaded into this context, kNotHandled
  // when nothing ran and the caller must run its own. Throws LaunchError for
  // an argument the kernel cannot take (a missing or misaligned tensor, an
  // unknown name, an integer other than the key's) and std::runtime_error
  // when the driver refuses the launch.
  virtual LaunchOutcome Launch(void* stream, const LaunchArgs& args) const = 0;

 protected:
  KernelHandle(Runner runner, std::string reason) : runner_(runner), reason_(std::move(reason)) {}

 private:
  const Runner runner_;
  const std::string reason_;
};

}  // namespace tiletune::launcher
