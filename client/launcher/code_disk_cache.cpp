#include "client/launcher/code_disk_cache.h"

#include <unistd.h>

#include <cctype>
#include <fstream>
#include <iterator>

#include "runtime/content_hash.h"

namespace tiletune::launcher {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Readers never see a half-written file.
void WriteAtomically(const fs::path& path, const std::string& data) {
  const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << data;
    if (!out) return;
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

// A hex content hash names a file in dir_, never a path elsewhere.
bool IsHexHash(const std::string& hash) {
  return hash.size() == 64 && hash.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

fs::path CodeDiskCache::IndexPath(const v1::KernelKey& key, const std::string& device_id) const {
  std::string bytes;
  // KernelKey has no map fields: these are the bytes Python's deterministic
  // serialization gives too.
  key.SerializeToString(&bytes);
  return dir_ / "keys" / runtime::ContentHash(bytes + device_id);
}

std::optional<std::string> CodeDiskCache::CachedHash(const v1::KernelKey& key,
                                                     const std::string& device_id) const {
  if (dir_.empty()) return std::nullopt;
  auto hash = ReadFile(IndexPath(key, device_id));
  if (!hash) return std::nullopt;
  while (!hash->empty() && std::isspace(static_cast<unsigned char>(hash->back()))) hash->pop_back();
  std::error_code ec;
  if (!IsHexHash(*hash) || !fs::exists(dir_ / *hash, ec)) return std::nullopt;
  return hash;
}

std::optional<std::string> CodeDiskCache::Code(const std::string& content_hash) const {
  if (dir_.empty() || !IsHexHash(content_hash)) return std::nullopt;
  return ReadFile(dir_ / content_hash);
}

void CodeDiskCache::Store(const v1::KernelKey& key, const std::string& device_id,
                          const std::string& content_hash, const std::string& code) const {
  if (dir_.empty() || !IsHexHash(content_hash)) return;
  std::error_code ec;
  fs::create_directories(dir_ / "keys", ec);
  if (ec) return;
  if (!fs::exists(dir_ / content_hash, ec)) WriteAtomically(dir_ / content_hash, code);
  WriteAtomically(IndexPath(key, device_id), content_hash);
}

void CodeDiskCache::Forget(const std::string& content_hash) const {
  if (dir_.empty() || !IsHexHash(content_hash)) return;
  std::error_code ec;
  fs::remove(dir_ / content_hash, ec);
}

}  // namespace tiletune::launcher
