#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace tiletune::testing {

// A throwaway PKI made with the openssl command in `dir`: a CA, a server
// certificate for 127.0.0.1 and localhost, and client certificates named by
// their CN. Fails the test when openssl does.
class TestCertificates {
 public:
  explicit TestCertificates(std::filesystem::path dir);

  // A CA with its own key: ca.pem / ca.key under `name`.
  void MakeCa(const std::string& name);
  // A certificate for `cn` signed by CA `ca`: <cn>.pem, <cn>.key. Servers
  // get the loopback names as subjectAltName.
  void MakeCertificate(const std::string& ca, const std::string& cn, bool server);

  std::string Ca(const std::string& name) const { return Path(name + "-ca.pem"); }
  std::string Cert(const std::string& cn) const { return Path(cn + ".pem"); }
  std::string Key(const std::string& cn) const { return Path(cn + ".key"); }

 private:
  std::string Path(const std::string& file) const { return (dir_ / file).string(); }
  void Openssl(const std::vector<std::string>& args) const;

  std::filesystem::path dir_;
};

}  // namespace tiletune::testing
