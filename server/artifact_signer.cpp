#include "server/artifact_signer.h"

#include <sys/stat.h>

#include <fstream>
#include <stdexcept>

#include "proto/artifact_statement.h"

namespace tiletune::server {
namespace {

std::string Hex(const unsigned char* bytes, size_t size) {
  std::string hex(2 * size + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), bytes, size);
  hex.pop_back();
  return hex;
}

}  // namespace

ArtifactSigner ArtifactSigner::LoadOrCreate(const std::filesystem::path& key_file) {
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialize");
  ArtifactSigner signer;
  std::error_code ec;
  if (!std::filesystem::exists(key_file, ec)) {
    crypto_sign_keypair(signer.public_.data(), signer.secret_.data());
    const std::filesystem::path tmp = key_file.string() + ".tmp";
    {
      std::ofstream out(tmp);
      out << Hex(signer.secret_.data(), signer.secret_.size()) << "\n";
      if (!out) throw std::runtime_error("artifact signing key " + tmp.string() + ": cannot write");
    }
    ::chmod(tmp.c_str(), 0600);
    std::filesystem::rename(tmp, key_file, ec);
    if (ec)
      throw std::runtime_error("artifact signing key " + key_file.string() + ": " + ec.message());
    return signer;
  }
  std::ifstream in(key_file);
  std::string hex;
  in >> hex;
  size_t decoded = 0;
  if (!in ||
      sodium_hex2bin(signer.secret_.data(), signer.secret_.size(), hex.data(), hex.size(), nullptr,
                     &decoded, nullptr) != 0 ||
      decoded != signer.secret_.size()) {
    throw std::runtime_error("artifact signing key " + key_file.string() + ": not the hex of a " +
                             std::to_string(crypto_sign_SECRETKEYBYTES) + "-byte ed25519 key");
  }
  crypto_sign_ed25519_sk_to_pk(signer.public_.data(), signer.secret_.data());
  return signer;
}

std::string ArtifactSigner::public_key_hex() const {
  return Hex(public_.data(), public_.size());
}

void ArtifactSigner::Sign(v1::KernelArtifact& artifact) const {
  artifact.set_signing_key(public_key_hex());
  const std::string statement = SignedStatement(artifact);
  std::array<unsigned char, crypto_sign_BYTES> signature{};
  crypto_sign_detached(signature.data(), nullptr,
                       reinterpret_cast<const unsigned char*>(statement.data()), statement.size(),
                       secret_.data());
  artifact.set_signature(Hex(signature.data(), signature.size()));
}

}  // namespace tiletune::server
