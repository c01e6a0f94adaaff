#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace tiletune::testing {

// A real, small filesystem (tmpfs of `bytes`) mounted on a folder, for
// tests of a full disk: Fill takes all the room left, Free gives it back.
// Mounting needs CAP_SYS_ADMIN (CI runs as root); Mount returns nullptr and
// says why when it is not allowed, for the test to skip.
class SmallDisk {
 public:
  static std::unique_ptr<SmallDisk> Mount(std::filesystem::path folder, int64_t bytes,
                                          std::string* why);
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  // Unmounts (lazily: a process may still hold files there).
  ~SmallDisk();

  const std::filesystem::path& path() const { return folder_; }
  // Writes a filler file until the disk has no room left.
  void Fill();
  // Removes the filler.
  void Free();

 private:
  explicit SmallDisk(std::filesystem::path folder) : folder_(std::move(folder)) {}
  std::filesystem::path filler() const { return folder_ / "filler"; }

  std::filesystem::path folder_;
};

}  // namespace tiletune::testing
