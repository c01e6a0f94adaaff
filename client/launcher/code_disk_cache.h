#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::launcher {

// Kernel code on disk by content hash, and per (key, device) the hash last
// served, so that the daemon is asked for the code only when it changed.
// The layout is the Python client's (client/python/tiletune/client.py):
// <dir>/<content hash>, <dir>/keys/<sha256(key bytes + device id)>. Nothing
// read here is trusted: the caller checks the code against the artifact the
// daemon sends. An empty dir turns the cache off; failing writes are ignored
// (the code is fetched again next time).
class CodeDiskCache {
 public:
  explicit CodeDiskCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // The content hash last stored for the key on `device_id`, if its code is there.
  std::optional<std::string> CachedHash(const v1::KernelKey& key,
                                        const std::string& device_id) const;
  std::optional<std::string> Code(const std::string& content_hash) const;
  void Store(const v1::KernelKey& key, const std::string& device_id,
             const std::string& content_hash, const std::string& code) const;
  // Drops code that failed its check, so that the next fetch replaces it.
  void Forget(const std::string& content_hash) const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path IndexPath(const v1::KernelKey& key, const std::string& device_id) const;

  const std::filesystem::path dir_;
};

}  // namespace tiletune::launcher
