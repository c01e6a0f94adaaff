#include "client/launcher/trusted_keys.h"

#include <algorithm>
#include <stdexcept>

#include "proto/artifact_statement.h"
#include "runtime/content_hash.h"

namespace tiletune::launcher {
namespace {

// Decodes exactly `out.size()` bytes of hex; false for anything else.
template <size_t N>
bool FromHex(std::string_view hex, std::array<unsigned char, N>& out) {
  size_t decoded = 0;
  const char* end = nullptr;
  return sodium_hex2bin(out.data(), out.size(), hex.data(), hex.size(), nullptr, &decoded, &end) ==
             0 &&
         decoded == N && end == hex.data() + hex.size();
}

std::string Abbreviated(const std::string& hex) {
  return hex.size() > 16 ? hex.substr(0, 16) + "..." : hex;
}

}  // namespace

TrustedKeys::TrustedKeys(const std::vector<std::string>& hex_keys) {
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialize");
  for (const std::string& hex : hex_keys) {
    PublicKey key{};
    if (!FromHex(hex, key)) {
      throw std::invalid_argument("trusted key '" + hex + "': not the hex of a " +
                                  std::to_string(key.size()) + "-byte ed25519 public key");
    }
    keys_.push_back(key);
  }
}

std::optional<std::string> TrustedKeys::Refusal(const v1::KernelArtifact& artifact,
                                                std::string_view code) const {
  if (static_cast<int64_t>(code.size()) != artifact.code_bytes() ||
      runtime::ContentHash(code) != artifact.content_hash()) {
    return "the code (" + std::to_string(code.size()) + " bytes) does not match its content hash " +
           Abbreviated(artifact.content_hash());
  }
  PublicKey signer{};
  if (!FromHex(artifact.signing_key(), signer) ||
      std::find(keys_.begin(), keys_.end(), signer) == keys_.end()) {
    return "signed by " +
           (artifact.signing_key().empty() ? std::string("no key")
                                           : "key " + Abbreviated(artifact.signing_key())) +
           ", which this launcher does not trust (" + std::to_string(keys_.size()) +
           " trusted keys)";
  }
  std::array<unsigned char, crypto_sign_BYTES> signature{};
  const std::string statement = SignedStatement(artifact);
  if (!FromHex(artifact.signature(), signature) ||
      crypto_sign_verify_detached(signature.data(),
                                  reinterpret_cast<const unsigned char*>(statement.data()),
                                  statement.size(), signer.data()) != 0) {
    return "its signature does not verify under " + Abbreviated(artifact.signing_key());
  }
  return std::nullopt;
}

}  // namespace tiletune::launcher
