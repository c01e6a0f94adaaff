#pragma once

#include <array>
#include <filesystem>
#include <string>
#include <string_view>

#include <sodium.h>

#include "tiletune/v1/artifacts.pb.h"

namespace tiletune::server {

// The daemon's ed25519 key (libsodium), with which it signs every kernel it
// serves, so that a client that trusts the public key can tell the code and
// its ABI came from this daemon whatever carried them (a cache on disk, an
// export, a fleet peer).
class ArtifactSigner {
 public:
  // The key in `key_file` (hex of the 64-byte secret key), created there
  // with mode 0600 when the file does not exist. Throws std::runtime_error
  // naming the file when it cannot be read, written or parsed.
  static ArtifactSigner LoadOrCreate(const std::filesystem::path& key_file);

  std::string public_key_hex() const;
  // Fills artifact.signing_key and artifact.signature (over
  // SignedStatement(artifact), proto/artifact_statement.h).
  void Sign(v1::KernelArtifact& artifact) const;

 private:
  ArtifactSigner() = default;
  std::array<unsigned char, crypto_sign_SECRETKEYBYTES> secret_{};
  std::array<unsigned char, crypto_sign_PUBLICKEYBYTES> public_{};
};

}  // namespace tiletune::server
