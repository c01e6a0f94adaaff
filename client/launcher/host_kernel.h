#pragma once

#include <memory>
#include <string>
#include <variant>

#include "client/launcher/kernel_handle.h"
#include "tiletune/v1/artifacts.pb.h"

namespace tiletune::launcher {

// A served host shared object, verified, then run in this process: its
// entry `int entry(const void* args)` is called with the packed struct.
class TunedHostKernel final : public KernelHandle {
 public:
  // Loads `code` from memory (a memfd), so that what dlopen maps is exactly
  // the bytes that were checked; or why it does not load.
  static std::variant<std::shared_ptr<const KernelHandle>, std::string> Load(
      v1::KernelArtifact artifact, const std::string& code, std::string reason);
  ~TunedHostKernel() override;

  // Runs the kernel before returning; throws std::runtime_error when its
  // entry returns a status other than 0.
  LaunchOutcome Launch(void* stream, const LaunchArgs& args) const override;

 private:
  using Entry = int (*)(const void*);
  TunedHostKernel(v1::KernelArtifact artifact, void* library, Entry entry, std::string reason)
      : KernelHandle(Runner::kTuned, std::move(reason)),
        artifact_(std::move(artifact)),
        library_(library),
        entry_(entry) {}

  const v1::KernelArtifact artifact_;
  void* const library_;
  const Entry entry_;
};

}  // namespace tiletune::launcher
