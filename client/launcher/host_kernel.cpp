#include "client/launcher/host_kernel.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "client/launcher/abi_packing.h"

namespace tiletune::launcher {
namespace {

// `code` in an anonymous in-memory file; -1 with `why`.
int MemoryFile(const std::string& code, std::string* why) {
  const int fd = ::memfd_create("tiletune-kernel", MFD_CLOEXEC);
  if (fd < 0) {
    *why = std::string("memfd_create: ") + std::strerror(errno);
    return -1;
  }
  for (size_t written = 0; written < code.size();) {
    const ssize_t n = ::write(fd, code.data() + written, code.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = std::string("writing the kernel to its memfd: ") + std::strerror(errno);
      ::close(fd);
      return -1;
    }
    written += static_cast<size_t>(n);
  }
  return fd;
}

}  // namespace

std::variant<std::shared_ptr<const KernelHandle>, std::string> TunedHostKernel::Load(
    v1::KernelArtifact artifact, const std::string& code, std::string reason) {
  std::string why;
  const int fd = MemoryFile(code, &why);
  if (fd < 0) return why;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ::close(fd);  // the mapping outlives it
  if (!library) return std::string("dlopen: ") + ::dlerror();
  const auto entry = reinterpret_cast<Entry>(::dlsym(library, artifact.entry().c_str()));
  if (!entry) {
    ::dlclose(library);
    return "no entry '" + artifact.entry() + "' in the host kernel";
  }
  return std::shared_ptr<const KernelHandle>(
      new TunedHostKernel(std::move(artifact), library, entry, std::move(reason)));
}

TunedHostKernel::~TunedHostKernel() {
  ::dlclose(library_);
}

LaunchOutcome TunedHostKernel::Launch(void* /*stream*/, const LaunchArgs& args) const {
  PackedArgs packed = PackArgs(artifact_.abi(), args);
  if (const int status = entry_(packed.data()); status != 0) {
    throw std::runtime_error(artifact_.entry() + " returned status " + std::to_string(status));
  }
  return {Runner::kTuned, reason()};
}

}  // namespace tiletune::launcher
