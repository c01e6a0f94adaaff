#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sodium.h>

#include "tiletune/v1/artifacts.pb.h"

namespace tiletune::launcher {

// The daemons' ed25519 public keys (libsodium) whose kernels may be loaded.
class TrustedKeys {
 public:
  // Hex public keys, as a daemon's ready file gives them (signing_key=).
  // Throws std::invalid_argument naming a key that is not 64 hex digits.
  explicit TrustedKeys(const std::vector<std::string>& hex_keys);

  // Why `code` must not be loaded as `artifact`: its SHA-256 is not the
  // content hash, the signer is not trusted, or the signature over
  // SignedStatement(artifact) does not verify. nullopt: load it.
  std::optional<std::string> Refusal(const v1::KernelArtifact& artifact,
                                     std::string_view code) const;

 private:
  using PublicKey = std::array<unsigned char, crypto_sign_PUBLICKEYBYTES>;
  std::vector<PublicKey> keys_;
};

}  // namespace tiletune::launcher
