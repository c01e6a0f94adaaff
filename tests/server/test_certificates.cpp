#include "tests/server/test_certificates.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {

TestCertificates::TestCertificates(std::filesystem::path dir) : dir_(std::move(dir)) {}

void TestCertificates::Openssl(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"/usr/bin/openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto result = RunCommand(argv);
  ASSERT_EQ(result.exit_code, 0) << "openssl " << args[0] << ": " << result.err;
}

void TestCertificates::MakeCa(const std::string& name) {
  // EC keys: generated in milliseconds, unlike RSA.
  Openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
           "-keyout", Path(name + "-ca.key"), "-out", Ca(name), "-days", "2", "-subj",
           "/CN=" + name + " test CA"});
}

void TestCertificates::MakeCertificate(const std::string& ca, const std::string& cn, bool server) {
  const std::string request = Path(cn + ".csr");
  const std::string extensions = Path(cn + ".ext");
  std::ofstream(extensions) << (server ? "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                       : "extendedKeyUsage=clientAuth\n");
  Openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
           Key(cn), "-out", request, "-subj", "/CN=" + cn});
  Openssl({"x509", "-req", "-in", request, "-CA", Ca(ca), "-CAkey", Path(ca + "-ca.key"),
           "-CAcreateserial", "-out", Cert(cn), "-days", "2", "-extfile", extensions});
}

}  // namespace tiletune::testing
