#include "server/artifact_signer.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

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

std::string SignedStatement(const v1::KernelArtifact& a) {
  std::ostringstream s;
  s << "tiletune-artifact=1\n"
    << "content_hash=" << a.content_hash() << "\n"
    << "code_bytes=" << a.code_bytes() << "\n"
    << "format=" << static_cast<int>(a.format()) << "\n"
    << "entry=" << a.entry() << "\n"
    << "target=" << a.target() << "\n"
    << "device_class=" << a.device_class() << "\n"
    << "kernel_name=" << a.kernel_name() << "\n"
    << "source_hash=" << a.source_hash() << "\n"
    << "key=" << a.canonical_key() << "\n"
    << "abi=" << a.abi().struct_name() << " " << a.abi().version() << " " << a.abi().struct_bytes()
    << " " << static_cast<int>(a.abi().passing()) << "\n";
  for (const v1::AbiField& f : a.abi().fields()) {
    s << "field=" << f.name() << " " << static_cast<int>(f.kind()) << " " << f.offset() << " "
      << f.bytes() << " " << f.value() << "\n";
  }
  return s.str();
}

}  // namespace tiletune::server
