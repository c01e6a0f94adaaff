#include "tests/support/small_disk.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace tiletune::testing {

std::unique_ptr<SmallDisk> SmallDisk::Mount(std::filesystem::path folder, int64_t bytes,
                                            std::string* why) {
  std::filesystem::create_directories(folder);
  const std::string options = "size=" + std::to_string(bytes) + ",mode=0755";
  if (::mount("tiletune-test", folder.c_str(), "tmpfs", 0, options.c_str()) != 0) {
    *why = "cannot mount a tmpfs on " + folder.string() + ": " + std::strerror(errno) +
           " (needs CAP_SYS_ADMIN, as root in CI)";
    return nullptr;
  }
  return std::unique_ptr<SmallDisk>(new SmallDisk(std::move(folder)));
}

SmallDisk::~SmallDisk() {
  ::umount2(folder_.c_str(), MNT_DETACH);
}

void SmallDisk::Fill() {
  const int fd = ::open(filler().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  // Big writes first, then page by page for the last bits.
  for (const size_t chunk : {size_t{1} << 16, size_t{4096}, size_t{512}}) {
    const std::vector<char> bytes(chunk, 'x');
    while (::write(fd, bytes.data(), bytes.size()) > 0) {
    }
  }
  const int error = errno;
  ::close(fd);
  ASSERT_EQ(error, ENOSPC) << std::strerror(error);
}

void SmallDisk::Free() {
  std::filesystem::remove(filler());
}

}  // namespace tiletune::testing
