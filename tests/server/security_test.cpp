// TLS, mutual TLS and bearer tokens on the real daemon, driven by the real
// CLI: who may look up, who may change things, and what each refusal says.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <fstream>

#include "client/channel.h"
#include "tests/server/test_certificates.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

constexpr char kAliceToken[] = "tt-alice-7f3a9c1e5b2d4068a1c3";
constexpr char kBobToken[] = "tt-bob-0c9e8d7f6a5b4c3d2e1f";

std::string WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

// The daemon's data folder; it must exist for the harness to log into it.
std::filesystem::path DataDir(const TempDir& dir) {
  std::filesystem::create_directories(dir.path() / "data");
  return dir.path() / "data";
}

// A one-kernel job that ends quickly on the host backend.
std::string TinyJob(const std::filesystem::path& dir, int cols = 100) {
  return WriteFile(dir / ("job-" + std::to_string(cols) + ".yaml"),
                   "name: tiny\nbudget: {max_variants: 1}\nkernels:\n"
                   "  - {op: softmax, dtype: f32, shape: {rows: 8, cols: " +
                       std::to_string(cols) + "}}\n");
}

// A job big enough to keep the device busy while others queue.
std::string BusyJob(const std::filesystem::path& dir, int cols = 4096) {
  return WriteFile(dir / ("busy-" + std::to_string(cols) + ".yaml"),
                   "name: busy\nbudget: {max_variants: 200, max_seconds: 60}\n"
                   "kernels:\n  - {op: softmax, dtype: f32, shape: {rows: 4096, cols: " +
                       std::to_string(cols) + "}}\n");
}

// The job id a successful `tiletune submit` printed first.
std::string SubmittedId(const CommandResult& submit) {
  return submit.out.substr(0, submit.out.find('\n'));
}

// The CLI against `daemon` with extra global flags before the command.
CommandResult Cli(const TiletunedProcess& daemon, std::vector<std::string> flags,
                  std::vector<std::string> command) {
  std::vector<std::string> argv = {BinaryPath("tiletune"), "--server", daemon.address(),
                                   "--timeout", "60"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), command.begin(), command.end());
  return RunCommand(argv);
}

const std::vector<std::string> kLookup = {"lookup", "--op",    "softmax",        "--dtype",
                                          "f32",    "--shape", "rows=8,cols=100"};

class TokenAuth : public ::testing::Test {
 protected:
  void SetUp() override {
    tokens_ = WriteFile(dir_.path() / "tokens", "# name token\nalice " + std::string(kAliceToken) +
                                                    "\nbob " + kBobToken + "\n");
    alice_ = WriteFile(dir_.path() / "alice.token", std::string(kAliceToken) + "\n");
    bob_ = WriteFile(dir_.path() / "bob.token", kBobToken);
    wrong_ = WriteFile(dir_.path() / "wrong.token", "tt-not-a-token-of-this-daemon");
  }

  TempDir dir_;
  std::string tokens_, alice_, bob_, wrong_;
};

TEST_F(TokenAuth, MutationsNeedAWriterTokenWhileLookupsStayOpen) {
  TiletunedProcess daemon(DataDir(dir_),
                          {"--auth-tokens-file", tokens_, "--auth-writers", "alice"});
  daemon.Start();
  const std::string job = TinyJob(dir_.path());

  auto lookup = Cli(daemon, {}, kLookup);
  EXPECT_EQ(lookup.exit_code, 0) << lookup.err;

  auto anonymous = Cli(daemon, {}, {"submit", job});
  EXPECT_EQ(anonymous.exit_code, 7) << anonymous.err;
  EXPECT_NE(anonymous.err.find("UNAUTHENTICATED: SubmitJob needs a credential"), std::string::npos)
      << anonymous.err;

  auto wrong = Cli(daemon, {"--token-file", wrong_}, {"submit", job});
  EXPECT_EQ(wrong.exit_code, 7);
  EXPECT_NE(wrong.err.find("UNAUTHENTICATED: authorization: the bearer token is not valid"),
            std::string::npos)
      << wrong.err;

  auto bob = Cli(daemon, {"--token-file", bob_}, {"submit", job});
  EXPECT_EQ(bob.exit_code, 7);
  EXPECT_NE(bob.err.find("PERMISSION_DENIED: SubmitJob: 'bob' is authenticated but not allowed"),
            std::string::npos)
      << bob.err;

  // The token file may come from the environment too.
  setenv("TILETUNE_TOKEN_FILE", alice_.c_str(), 1);
  auto alice = Cli(daemon, {}, {"submit", job});
  unsetenv("TILETUNE_TOKEN_FILE");
  ASSERT_EQ(alice.exit_code, 0) << alice.err;
  const std::string id = alice.out.substr(0, alice.out.find('\n'));

  EXPECT_EQ(Cli(daemon, {"--token-file", bob_}, {"jobs", "cancel", id}).exit_code, 7);
  EXPECT_EQ(Cli(daemon, {}, {"jobs", "show", id}).exit_code, 0);
  auto import = Cli(daemon, {}, {"records", "import", job});
  EXPECT_EQ(import.exit_code, 7) << import.err;
  EXPECT_NE(import.err.find("ImportRecords needs a credential"), std::string::npos);

  const std::string log = daemon.log();
  EXPECT_NE(log.find("caller=alice: submitted"), std::string::npos) << log;
  for (const char* secret : {kAliceToken, kBobToken, "tt-not-a-token-of-this-daemon"}) {
    EXPECT_EQ(log.find(secret), std::string::npos) << "a token reached the log";
  }
}

TEST_F(TokenAuth, ClosedReadsNeedAnyValidToken) {
  TiletunedProcess daemon(DataDir(dir_),
                          {"--auth-tokens-file", tokens_, "--auth-open-reads", "false"});
  daemon.Start();
  auto list = Cli(daemon, {}, {"jobs", "list"});
  EXPECT_EQ(list.exit_code, 7) << list.err;
  EXPECT_NE(list.err.find("ListJobs needs a credential"), std::string::npos) << list.err;
  EXPECT_EQ(Cli(daemon, {"--token-file", bob_}, {"jobs", "list"}).exit_code, 0);
  // Health is the orchestrator's probe: always open.
  EXPECT_EQ(Cli(daemon, {}, {"health"}).exit_code, 0);
}

TEST_F(TokenAuth, BearerSchemeIsCaselessAndTakesAnyRunOfSpaces) {
  TiletunedProcess daemon(DataDir(dir_),
                          {"--auth-tokens-file", tokens_, "--auth-open-reads", "false"});
  daemon.Start();
  auto stub = daemon.Stub();
  auto list_jobs = [&](const std::string& authorization) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", authorization);
    v1::ListJobsResponse jobs;
    return stub->ListJobs(&ctx, {}, &jobs);
  };
  // gRPC metadata cannot carry a tab, so only spaces travel here.
  for (const std::string scheme : {"Bearer  ", "bearer ", "BEARER   "}) {
    const auto status = list_jobs(scheme + kBobToken);
    EXPECT_TRUE(status.ok()) << "'" << scheme << "': " << status.error_message();
  }
  auto glued = list_jobs(std::string("Bearer") + kBobToken);
  EXPECT_EQ(glued.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(glued.error_message().find("expected 'Bearer <token>'"), std::string::npos)
      << glued.error_message();
  auto wrong = list_jobs("Bearer  tt-not-a-token-of-this-daemon");
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(wrong.error_message().find("the bearer token is not valid"), std::string::npos)
      << wrong.error_message();

  const std::string log = daemon.log();
  for (const char* secret : {kBobToken, "tt-not-a-token-of-this-daemon"}) {
    EXPECT_EQ(log.find(secret), std::string::npos) << "a token reached the log";
  }
}

TEST_F(TokenAuth, MalformedTokensFileStopsTheDaemonWithoutShowingIt) {
  const std::string bad =
      WriteFile(dir_.path() / "bad-tokens", "alice " + std::string(kAliceToken) + " extra\n");
  auto result =
      RunCommand({BinaryPath("tiletuned"), "--data-dir", (dir_.path() / "d").string(), "--listen",
                  "127.0.0.1:0", "--metrics-listen", "", "--auth-tokens-file", bad});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("auth_tokens_file " + bad + ": line 1: expected 'NAME TOKEN'"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find(kAliceToken), std::string::npos);
}

TEST_F(TokenAuth, EachClientHasItsOwnQueueQuota) {
  TiletunedProcess daemon(DataDir(dir_),
                          {"--auth-tokens-file", tokens_, "--max-queued-jobs-per-client", "2"});
  daemon.Start();
  const std::string busy = BusyJob(dir_.path());
  auto submit = [&](const std::string& token, const std::string& file) {
    return Cli(daemon, {"--token-file", token}, {"submit", file});
  };
  ASSERT_EQ(submit(alice_, busy).exit_code, 0);
  ASSERT_EQ(submit(alice_, TinyJob(dir_.path(), 101)).exit_code, 0);
  auto third = submit(alice_, TinyJob(dir_.path(), 102));
  EXPECT_EQ(third.exit_code, 1) << third.err;
  EXPECT_NE(third.err.find("RESOURCE_EXHAUSTED: 'alice' already has 2 jobs queued or running; "
                           "max_queued_jobs_per_client=2"),
            std::string::npos)
      << third.err;
  EXPECT_EQ(submit(bob_, TinyJob(dir_.path(), 103)).exit_code, 0) << "bob has his own quota";

  auto list = Cli(daemon, {"--json"}, {"jobs", "list"});
  for (size_t at = 0; (at = list.out.find("\"id\":\"j-", at)) != std::string::npos; ++at) {
    Cli(daemon, {"--token-file", alice_}, {"jobs", "cancel", list.out.substr(at + 6, 14)});
  }
  EXPECT_EQ(submit(alice_, TinyJob(dir_.path(), 104)).exit_code, 0)
      << "cancelled jobs leave the quota";
}

TEST_F(TokenAuth, QueueQuotaHoldsAcrossARestart) {
  TiletunedProcess daemon(DataDir(dir_),
                          {"--auth-tokens-file", tokens_, "--max-queued-jobs-per-client", "2",
                           "--drain-timeout-seconds", "0.1"});
  daemon.Start();
  auto submit = [&](const std::string& file) {
    return Cli(daemon, {"--token-file", alice_}, {"submit", file});
  };
  // Both stay active across the restart: one resumes, the other waits.
  const auto first = submit(BusyJob(dir_.path(), 4096));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto second = submit(BusyJob(dir_.path(), 4095));
  ASSERT_EQ(second.exit_code, 0) << second.err;

  ASSERT_EQ(daemon.Stop(SIGTERM), 0);
  daemon.Start();
  auto refused = submit(TinyJob(dir_.path(), 105));
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("RESOURCE_EXHAUSTED: 'alice' already has 2 jobs queued or running; "
                             "max_queued_jobs_per_client=2"),
            std::string::npos)
      << refused.err;
  auto shown = Cli(daemon, {}, {"jobs", "show", SubmittedId(first)});
  EXPECT_NE(shown.out.find("submitted by  alice"), std::string::npos) << shown.out;

  ASSERT_EQ(Cli(daemon, {"--token-file", alice_}, {"jobs", "cancel", SubmittedId(first)}).exit_code,
            0);
  EXPECT_EQ(submit(TinyJob(dir_.path(), 106)).exit_code, 0) << "a cancelled job frees its place";
  Cli(daemon, {"--token-file", alice_}, {"jobs", "cancel", SubmittedId(second)});
}

class MutualTls : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_.MakeCa("node");
    pki_.MakeCa("rogue");
    pki_.MakeCertificate("node", "tiletuned", /*server=*/true);
    pki_.MakeCertificate("node", "alice", /*server=*/false);
    pki_.MakeCertificate("node", "mallory", /*server=*/false);
    pki_.MakeCertificate("rogue", "eve", /*server=*/false);
  }

  std::vector<std::string> ClientFlags(const std::string& cn) const {
    return {"--tls-ca", pki_.Ca("node"), "--tls-cert", pki_.Cert(cn), "--tls-key", pki_.Key(cn)};
  }

  TempDir dir_;
  TestCertificates pki_{dir_.path()};
};

TEST_F(MutualTls, CertificateCnIsTheIdentityAndStrangersCannotConnect) {
  TiletunedProcess daemon(DataDir(dir_),
                          {"--tls-cert-file", pki_.Cert("tiletuned"), "--tls-key-file",
                           pki_.Key("tiletuned"), "--tls-client-ca-file", pki_.Ca("node"),
                           "--tls-require-client-cert", "--auth-writers", "alice"});
  daemon.Start();
  const std::string job = TinyJob(dir_.path());

  auto alice = Cli(daemon, ClientFlags("alice"), {"submit", job});
  EXPECT_EQ(alice.exit_code, 0) << alice.err;
  EXPECT_NE(daemon.log().find("caller=alice: submitted"), std::string::npos);

  auto mallory = Cli(daemon, ClientFlags("mallory"), {"submit", job});
  EXPECT_EQ(mallory.exit_code, 7);
  EXPECT_NE(mallory.err.find("PERMISSION_DENIED: SubmitJob: 'mallory'"), std::string::npos)
      << mallory.err;
  EXPECT_EQ(Cli(daemon, ClientFlags("mallory"), kLookup).exit_code, 0);

  // No certificate, one from another CA, or no TLS at all: no connection.
  EXPECT_EQ(Cli(daemon, {"--tls-ca", pki_.Ca("node")}, {"health"}).exit_code, 3);
  auto eve = ClientFlags("eve");
  EXPECT_EQ(Cli(daemon, eve, {"health"}).exit_code, 3);
  EXPECT_EQ(Cli(daemon, {}, {"health"}).exit_code, 3);
  // A client that does not trust the daemon's CA refuses it.
  EXPECT_EQ(Cli(daemon, {"--tls", "--tls-cert", pki_.Cert("alice"), "--tls-key", pki_.Key("alice")},
                {"health"})
                .exit_code,
            3);
}

TEST_F(MutualTls, TlsWithTokensServesClientsWithoutCertificates) {
  const std::string tokens = WriteFile(dir_.path() / "tokens", "ci " + std::string(kBobToken));
  const std::string token = WriteFile(dir_.path() / "ci.token", kBobToken);
  TiletunedProcess daemon(DataDir(dir_),
                          {"--tls-cert-file", pki_.Cert("tiletuned"), "--tls-key-file",
                           pki_.Key("tiletuned"), "--auth-tokens-file", tokens});
  daemon.Start();
  const std::vector<std::string> tls = {"--tls-ca", pki_.Ca("node")};
  EXPECT_EQ(Cli(daemon, tls, {"health"}).exit_code, 0);
  EXPECT_EQ(Cli(daemon, tls, {"submit", TinyJob(dir_.path())}).exit_code, 7);
  auto with_token = tls;
  with_token.insert(with_token.end(), {"--token-file", token});
  EXPECT_EQ(Cli(daemon, with_token, {"submit", TinyJob(dir_.path())}).exit_code, 0);
  EXPECT_NE(daemon.log().find("caller=ci: submitted"), std::string::npos);
  EXPECT_EQ(daemon.log().find("bearer tokens travel in plaintext"), std::string::npos);
}

TEST(ServerLimits, ChainLengthAndProblemSizeAreEnforced) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--max-chain-length", "2", "--max-elements", "1000000"});
  daemon.Start();
  auto stub = daemon.Stub();
  auto lookup = [&](const v1::KernelKey& key) {
    grpc::ClientContext ctx;
    v1::LookupRequest request;
    *request.mutable_key() = key;
    v1::LookupResponse response;
    return stub->Lookup(&ctx, request, &response);
  };
  EXPECT_TRUE(lookup(GemmKey(64, 64, 64, {"bias", "relu"})).ok());
  auto chain = lookup(GemmKey(64, 64, 64, {"bias", "relu", "scale"}));
  EXPECT_EQ(chain.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(chain.error_message().rfind("key.chain:", 0), 0u) << chain.error_message();
  auto size = lookup(GemmKey(2048, 1024, 64));
  EXPECT_EQ(size.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(size.error_message().find("max_elements"), std::string::npos) << size.error_message();
}

}  // namespace
}  // namespace tiletune::testing
