#include "compiled_code_cache.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <vector>

namespace tiletune::runtime {

namespace fs = std::filesystem;

namespace {

// Removes the work folders (<key>-<pid>-<serial>, MakeWorkDir) of processes
// that are gone: a daemon killed mid-compile leaves its own behind, and
// other daemons sharing the cache may be using theirs right now.
void SweepDeadWorkDirs(const fs::path& tmp) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(tmp, ec)) {
    const std::string name = entry.path().filename().string();
    const auto last = name.rfind('-');
    const auto before = last == std::string::npos ? last : name.rfind('-', last - 1);
    if (before == std::string::npos) continue;
    const pid_t pid =
        static_cast<pid_t>(std::atol(name.substr(before + 1, last - before - 1).c_str()));
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) != 0 && errno == ESRCH) fs::remove_all(entry.path(), ec);
  }
}

}  // namespace

CompiledCodeCache::CompiledCodeCache(fs::path dir, int64_t max_bytes, std::string suffix)
    : dir_(std::move(dir)), max_bytes_(max_bytes), suffix_(std::move(suffix)) {
  fs::create_directories(dir_ / "tmp");
  SweepDeadWorkDirs(dir_ / "tmp");
  for (const auto& file : fs::directory_iterator(dir_)) {
    const std::string name = file.path().filename().string();
    if (!file.is_regular_file() || !name.ends_with(suffix_)) continue;
    const std::string key = name.substr(0, name.size() - suffix_.size());
    const auto bytes = static_cast<int64_t>(file.file_size());
    index_[key] = bytes;
    total_bytes_ += bytes;
  }
}

std::optional<fs::path> CompiledCodeCache::Find(const std::string& key) {
  std::lock_guard lock(mu_);
  const fs::path path = PathOf(key);
  std::error_code ec;
  const auto bytes = fs::file_size(path, ec);
  if (ec) {
    // Gone, or never here: another daemon may have evicted it.
    if (const auto it = index_.find(key); it != index_.end()) {
      total_bytes_ -= it->second;
      index_.erase(it);
    }
    return std::nullopt;
  }
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // best effort
  int64_t& indexed = index_[key];
  total_bytes_ += static_cast<int64_t>(bytes) - indexed;
  indexed = static_cast<int64_t>(bytes);
  return path;
}

fs::path CompiledCodeCache::Insert(const std::string& key, const fs::path& built) {
  const fs::path path = PathOf(key);
  const auto bytes = static_cast<int64_t>(fs::file_size(built));
  fs::rename(built, path);
  std::lock_guard lock(mu_);
  int64_t& indexed = index_[key];
  total_bytes_ += bytes - indexed;
  indexed = bytes;
  EvictLocked(key);
  return path;
}

fs::path CompiledCodeCache::MakeWorkDir(const std::string& key) {
  uint64_t serial = 0;
  {
    std::lock_guard lock(mu_);
    serial = ++work_dirs_;
  }
  // Process id and a serial make the name unique among daemons and threads.
  const fs::path dir =
      dir_ / "tmp" /
      (key.substr(0, 16) + "-" + std::to_string(::getpid()) + "-" + std::to_string(serial));
  fs::create_directories(dir);
  return dir;
}

int64_t CompiledCodeCache::size_bytes() const {
  std::lock_guard lock(mu_);
  return total_bytes_;
}

void CompiledCodeCache::EvictLocked(const std::string& keep) {
  if (total_bytes_ <= max_bytes_) return;
  // Ages come from the files, not the index: other daemons touch them too.
  std::vector<std::pair<fs::file_time_type, std::string>> by_age;
  for (auto it = index_.begin(); it != index_.end();) {
    std::error_code ec;
    const auto mtime = fs::last_write_time(PathOf(it->first), ec);
    if (ec) {
      total_bytes_ -= it->second;
      it = index_.erase(it);
      continue;
    }
    if (it->first != keep) by_age.emplace_back(mtime, it->first);
    ++it;
  }
  std::sort(by_age.begin(), by_age.end());
  for (const auto& [mtime, key] : by_age) {
    if (total_bytes_ <= max_bytes_) break;
    std::error_code ec;
    fs::remove(PathOf(key), ec);
    total_bytes_ -= index_[key];
    index_.erase(key);
  }
}

}  // namespace tiletune::runtime
