// KernelLauncher against a real tiletuned on the host backend: a decode
// GEMM tuned there is resolved, verified and launched from its served ABI
// alone and checked against float64; then each refusal (untrusted key,
// tampered cache, host code off), a miss, a daemon down or silent, and the
// argument checks, each with the reason it gives; and which cuBLASLt
// algorithm a record makes the fallback run.
#include "client/launcher/kernel_launcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>
#include <sodium.h>

#include "client/launcher/abi_packing.h"
#include "client/launcher/cuda_kernels.h"
#include "client/launcher/trusted_keys.h"
#include "kernels/core/abi_description.h"
#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/gemm_args.h"
#include "launcher_test_support.h"
#include "loopback_ports.h"
#include "proto/artifact_statement.h"
#include "runtime/content_hash.h"
#include "tests/support/gemm_test_key.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::launcher {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::BiasReluGemm;
using testing::DeviceId;
using testing::LoopbackPort;

// A GEMM tuning wins against host-naive, the tests' host baseline: a decode GEMV
// (tests/support/tiletuned_process.h).
constexpr int64_t kM = 1, kN = testing::kDecodeGemmN, kK = testing::kDecodeGemmK;

const v1::DeviceSelector kCpu = DeviceId("cpu:0");

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not say '" << part << "'";
}

class KernelLauncherTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    std::vector<std::string> flags = {"--host-cpus", "1"};
    flags.insert(flags.end(), testing::kServeAnyTunedKernel.begin(),
                 testing::kServeAnyTunedKernel.end());
    daemon_ = new testing::TiletunedProcess(dir_->path() / "daemon", flags);
    fs::create_directories(dir_->path() / "daemon");
    daemon_->Start();
    signing_key_ = testing::ReadyFileValue(dir_->path() / "daemon" / "ready", "signing_key");
    testing::Tune(*daemon_->Stub(), Key(), kCpu, testing::kDecodeGemmSeed);
  }
  static void TearDownTestSuite() {
    delete daemon_;
    delete dir_;
  }

  static v1::KernelKey Key() { return testing::BiasReluGemmKey(kM, kN, kK); }

  // Trusting the daemon, running host code, and waiting for its answers.
  static LauncherOptions Trusting() {
    LauncherOptions options;
    options.trusted_keys = {signing_key_};
    options.allow_host_code = true;
    options.resolve_deadline = 2min;
    return options;
  }

  static std::shared_ptr<const KernelHandle> ResolveTuned(const LauncherOptions& options) {
    KernelLauncher launcher(daemon_->address(), options);
    return launcher.Resolve(Key(), kCpu);
  }

  static testing::TempDir* dir_;
  static testing::TiletunedProcess* daemon_;
  static std::string signing_key_;
};

testing::TempDir* KernelLauncherTest::dir_ = nullptr;
testing::TiletunedProcess* KernelLauncherTest::daemon_ = nullptr;
std::string KernelLauncherTest::signing_key_;

TEST_F(KernelLauncherTest, ATunedHostGemmRunsFromTheServedAbiAndMatchesFloat64) {
  const auto handle = ResolveTuned(Trusting());
  ASSERT_EQ(handle->runner(), Runner::kTuned) << handle->reason();
  BiasReluGemm gemm(kM, kN, kK);
  const LaunchOutcome outcome = handle->Launch(nullptr, gemm.HostArgs());
  EXPECT_EQ(outcome.runner, Runner::kTuned) << outcome.reason;
  EXPECT_LT(gemm.WorstError(), 1e-4);
}

TEST_F(KernelLauncherTest, PrefetchedKeysTurnTunedWithoutResolveEverWaiting) {
  LauncherOptions options = Trusting();
  options.resolve_deadline = 1ms;
  KernelLauncher launcher(daemon_->address(), options);
  launcher.Prefetch({Key()}, kCpu);
  std::shared_ptr<const KernelHandle> handle;
  const auto give_up_at = std::chrono::steady_clock::now() + 5min;
  while (std::chrono::steady_clock::now() < give_up_at) {
    const auto started = std::chrono::steady_clock::now();
    handle = launcher.Resolve(Key(), kCpu);
    // The reason says it gave up at its 1 ms; the bound only catches a
    // Resolve that waits for the tuning (minutes).
    EXPECT_LT(std::chrono::steady_clock::now() - started, 30s);
    if (handle->runner() == Runner::kTuned) break;
    EXPECT_TRUE(Contains(handle->reason(), "has not answered within 1 ms"));
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(handle->runner(), Runner::kTuned) << handle->reason();
  EXPECT_EQ(launcher.Resolve(Key(), kCpu), handle) << "loaded once, then handed out";
}

TEST_F(KernelLauncherTest, AKernelSignedByAnUntrustedKeyIsRefused) {
  LauncherOptions options = Trusting();
  options.trusted_keys = {std::string(64, 'a')};
  const auto handle = ResolveTuned(options);
  EXPECT_EQ(handle->runner(), Runner::kNotHandled);
  EXPECT_TRUE(Contains(handle->reason(), "refused the served kernel: signed by key "));
  EXPECT_TRUE(Contains(handle->reason(), "which this launcher does not trust"));
  EXPECT_TRUE(Contains(handle->reason(), "no fallback here"));
  BiasReluGemm gemm(kM, kN, kK);
  EXPECT_EQ(handle->Launch(nullptr, gemm.HostArgs()).runner, Runner::kNotHandled);
  EXPECT_TRUE(std::isnan(gemm.c[0])) << "nothing ran";
}

TEST_F(KernelLauncherTest, HostCodeIsLoadedOnlyWhenAllowed) {
  LauncherOptions options = Trusting();
  options.allow_host_code = false;
  const auto handle = ResolveTuned(options);
  EXPECT_EQ(handle->runner(), Runner::kNotHandled);
  EXPECT_TRUE(Contains(handle->reason(), "allow_host_code is off"));
}

TEST_F(KernelLauncherTest, ATamperedCacheFileIsRefusedThenFetchedAgain) {
  LauncherOptions options = Trusting();
  options.cache_dir = dir_->path() / "cache";
  ASSERT_EQ(ResolveTuned(options)->runner(), Runner::kTuned);
  fs::path code_file;
  for (const auto& file : fs::directory_iterator(options.cache_dir)) {
    if (file.is_regular_file()) code_file = file.path();
  }
  ASSERT_FALSE(code_file.empty()) << "the code is cached by content hash";
  std::string code;
  {
    std::ifstream in(code_file, std::ios::binary);
    code.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  code[code.size() / 2] ^= 0x01;
  std::ofstream(code_file, std::ios::binary) << code;

  const auto refused = ResolveTuned(options);
  EXPECT_EQ(refused->runner(), Runner::kNotHandled);
  EXPECT_TRUE(Contains(refused->reason(), "refused the kernel cached in"));
  EXPECT_TRUE(Contains(refused->reason(), "does not match its content hash"));
  EXPECT_FALSE(fs::exists(code_file)) << "dropped, so that the next fetch replaces it";
  EXPECT_EQ(ResolveTuned(options)->runner(), Runner::kTuned);
}

TEST_F(KernelLauncherTest, AMissIsNotHandledOnTheHost) {
  KernelLauncher launcher(daemon_->address(), Trusting());
  const auto handle = launcher.Resolve(testing::BiasReluGemmKey(33, 17, 5), kCpu);
  EXPECT_EQ(handle->runner(), Runner::kNotHandled);
  EXPECT_TRUE(Contains(handle->reason(), "tiletuned serves no tuned kernel (host-naive)"));
  EXPECT_TRUE(Contains(handle->reason(), "device is 'cpu:0'"));
}

TEST_F(KernelLauncherTest, TheServedSignatureCoversTheCodeAndTheAbi) {
  v1::GetKernelRequest request;
  *request.mutable_key() = Key();
  grpc::ClientContext ctx;
  auto reader = daemon_->Stub()->GetKernel(&ctx, request);
  v1::GetKernelResponse head, message;
  std::string code;
  for (bool first = true; reader->Read(&message); first = false) {
    if (first) head = message;
    code += message.code_chunk();
  }
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_TRUE(head.has_artifact());
  const TrustedKeys trusted({signing_key_});
  EXPECT_EQ(trusted.Refusal(head.artifact(), code), std::nullopt);

  v1::KernelArtifact moved = head.artifact();
  moved.mutable_abi()->mutable_fields(0)->set_offset(8);
  EXPECT_TRUE(Contains(trusted.Refusal(moved, code).value_or(""), "signature does not verify"));
  std::string changed = code;
  changed.back() ^= 0x01;
  EXPECT_TRUE(Contains(trusted.Refusal(head.artifact(), changed).value_or(""),
                       "does not match its content hash"));
  EXPECT_THROW(TrustedKeys({"not hex"}), std::invalid_argument);
}

TEST_F(KernelLauncherTest, ArgumentsAreCheckedBeforeAnythingRuns) {
  const auto handle = ResolveTuned(Trusting());
  ASSERT_EQ(handle->runner(), Runner::kTuned) << handle->reason();
  BiasReluGemm gemm(kM, kN, kK);
  const auto refused = [&](LaunchArgs args, const std::string& field, const std::string& says) {
    try {
      handle->Launch(nullptr, args);
      ADD_FAILURE() << "launched without " << field << " being refused";
    } catch (const LaunchError& e) {
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_TRUE(Contains(e.what(), says));
    }
  };
  LaunchArgs args = gemm.HostArgs();
  args.tensors.erase("b");
  refused(args, "b",
          "the kernel needs this tensor, of shape [1, " + std::to_string(kK) + ", " +
              std::to_string(kN) + "]");

  args = gemm.HostArgs();
  args.tensors["a"] = reinterpret_cast<const char*>(gemm.a.data()) + 4;
  refused(args, "a", "is not aligned to 16 bytes");

  args = gemm.HostArgs();
  args.tensors["bias"] = gemm.bias.data();
  refused(args, "bias", "no tensor of that name in tt_gemm_args (its tensors: a, b, b_up, c)");

  args = gemm.HostArgs();
  args.ints["m"] = kM + 1;
  refused(args, "m", "2; the kernel was built for 1");

  args = gemm.HostArgs();
  args.chain_tensors.clear();
  refused(args, "chain[0] (bias)",
          "reads a tensor of shape [" + std::to_string(kN) + "]; none given");

  args = gemm.HostArgs();
  args.chain_tensors[1] = gemm.bias.data();
  refused(args, "chain[1] (relu)", "reads no tensor");

  args = gemm.HostArgs();
  args.chain_scalars[0] = 2.0f;
  refused(args, "chain[0] (bias)", "reads no scalar");

  EXPECT_TRUE(std::isnan(gemm.c[0])) << "nothing ran";
  args = gemm.HostArgs();
  args.ints["m"] = kM;  // the key's own value may be given
  EXPECT_EQ(handle->Launch(nullptr, args).runner, Runner::kTuned);
  EXPECT_LT(gemm.WorstError(), 1e-4);
}

v1::BaselineCandidate CandidateOf(int index, double median_us, bool epilogue_pass) {
  v1::BaselineCandidate c;
  c.mutable_algorithm()->set_heuristic_index(index);
  c.mutable_algorithm()->set_epilogue_pass(epilogue_pass);
  c.mutable_algorithm()->set_algo(std::string(64, static_cast<char>('a' + index)));
  c.mutable_timing()->set_median_us(median_us);
  return c;
}

TEST(FallbackAlgorithm, TheRecordsBaselineWhenCublasLtComputedTheWholeKey) {
  v1::Record record;
  EXPECT_FALSE(FallbackAlgorithmOf(record));  // a record from before: the heuristic picks
  *record.add_baseline_candidates() = CandidateOf(0, 30, false);
  *record.add_baseline_candidates() = CandidateOf(1, 20, false);
  *record.mutable_baseline_algorithm() = record.baseline_candidates(1).algorithm();
  const auto algorithm = FallbackAlgorithmOf(record);
  ASSERT_TRUE(algorithm);
  EXPECT_EQ(algorithm->heuristic_index(), 1);
}

TEST(FallbackAlgorithm, WhenThePassWonTheFastestCandidateCublasLtRunsAlone) {
  // The launcher has no epilogue pass: the fastest correct fused candidate.
  v1::Record record;
  *record.add_baseline_candidates() = CandidateOf(0, 30, false);
  *record.add_baseline_candidates() = CandidateOf(1, 25, false);
  *record.add_baseline_candidates() = CandidateOf(2, 12, false);
  record.mutable_baseline_candidates(2)->set_error("wrong result");
  *record.add_baseline_candidates() = CandidateOf(0, 10, true);
  *record.mutable_baseline_algorithm() = record.baseline_candidates(3).algorithm();
  const auto algorithm = FallbackAlgorithmOf(record);
  ASSERT_TRUE(algorithm);
  EXPECT_EQ(algorithm->heuristic_index(), 1);
  EXPECT_FALSE(algorithm->epilogue_pass());
  // Only the pass ran correctly (a chain cuBLASLt cannot fuse): none.
  v1::Record pass_only;
  *pass_only.add_baseline_candidates() = CandidateOf(0, 10, true);
  *pass_only.mutable_baseline_algorithm() = pass_only.baseline_candidates(0).algorithm();
  EXPECT_FALSE(FallbackAlgorithmOf(pass_only));
}

TEST(KernelLauncherWithoutDaemon, ADaemonDownAnswersTheFallbackAtOnce) {
  LoopbackPort port(LoopbackPort::Mode::kRefusing);
  LauncherOptions options;
  // A deadline far off: the reason names the refusal, not the deadline.
  options.resolve_deadline = 5min;
  KernelLauncher launcher(port.address(), options);
  const auto handle = launcher.Resolve(testing::BiasReluGemmKey(kM, kN, kK), kCpu);
  EXPECT_EQ(handle->runner(), Runner::kNotHandled);
  EXPECT_TRUE(Contains(handle->reason(), "tiletuned unavailable at " + port.address()))
      << handle->reason();
}

TEST(KernelLauncherWithoutDaemon, ASilentDaemonAnswersTheFallbackAtTheDeadline) {
  LoopbackPort port(LoopbackPort::Mode::kSilent);
  LauncherOptions options;
  options.resolve_deadline = 100ms;
  KernelLauncher launcher(port.address(), options);
  const auto started = std::chrono::steady_clock::now();
  const auto handle = launcher.Resolve(testing::BiasReluGemmKey(kM, kN, kK), kCpu);
  const auto waited = std::chrono::steady_clock::now() - started;
  EXPECT_GE(waited, 90ms);
  // The reason says the deadline ended it; the bound only catches a Resolve
  // that hangs on past it.
  EXPECT_LT(waited, 60s);
  EXPECT_EQ(handle->runner(), Runner::kNotHandled);
  EXPECT_TRUE(Contains(handle->reason(), "has not answered within 100 ms"));
}

// Loading a kernel runs its code: it is fetched only from a node-local
// daemon or over TLS, unless the operator says otherwise.
TEST(KernelLauncherWithoutDaemon, PlaintextTcpToAnotherHostIsRefused) {
  for (const std::string remote :
       {"10.11.12.13:7733", "tiletune.example:7733", "[2001:db8::1]:1"}) {
    try {
      KernelLauncher launcher(remote);
      ADD_FAILURE() << remote << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(Contains(e.what(), remote + ": plaintext TCP to another host")) << e.what();
    }
  }
  LauncherOptions allowed;
  allowed.allow_plaintext_remote = true;
  EXPECT_NO_THROW(KernelLauncher("10.11.12.13:7733", allowed));
  LauncherOptions tls;
  tls.channel.tls = true;
  EXPECT_NO_THROW(KernelLauncher("10.11.12.13:7733", tls));
  for (const std::string local : {"127.0.0.1:7733", "localhost:7733", "[::1]:7733",
                                  "dns:///localhost:1", "unix:/run/tiletune/tiletuned.sock"}) {
    EXPECT_NO_THROW(KernelLauncher{local}) << local;
  }
}

std::string SourceFile(const std::string& path) {
  std::ifstream in(fs::path(TILETUNE_SOURCE_DIR) / path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A TMA kernel's artifact (tests/client/data/tma_artifact.textproto, which
// the Python client's tests read too).
v1::KernelArtifact TmaArtifact() {
  v1::KernelArtifact artifact;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      SourceFile("tests/client/data/tma_artifact.textproto"), &artifact));
  return artifact;
}

TEST(SignedStatement, ATmaKernelsStatementCoversItsTensorMapsAndArgumentSize) {
  const v1::KernelArtifact artifact = TmaArtifact();
  // The artifact is what a daemon would serve for its key.
  const v1::KernelKey key =
      testing::GemmTestKey(37, 200, 200, 3, v1::DTYPE_BF16, v1::DTYPE_BF16, false, false);
  EXPECT_EQ(artifact.canonical_key(), kernels::CanonicalKeyString(key));
  const v1::KernelAbi abi = kernels::DescribeLaunchAbi(key, v1::KernelAbi::PASSING_BY_VALUE);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(artifact.abi(), abi))
      << abi.DebugString();
  EXPECT_EQ(SignedStatement(artifact), SourceFile("tests/client/data/tma_artifact.statement"));
}

TEST(TrustedKeys, ATamperedTensorMapIsRefused) {
  ASSERT_GE(sodium_init(), 0);
  unsigned char public_key[crypto_sign_PUBLICKEYBYTES], secret_key[crypto_sign_SECRETKEYBYTES];
  crypto_sign_keypair(public_key, secret_key);
  const auto hex = [](const unsigned char* bytes, size_t size) {
    std::string text(size * 2 + 1, '\0');
    sodium_bin2hex(text.data(), text.size(), bytes, size);
    text.pop_back();
    return text;
  };
  const std::string code = "a TMA kernel's code";
  v1::KernelArtifact signed_artifact = TmaArtifact();
  signed_artifact.set_content_hash(runtime::ContentHash(code));
  signed_artifact.set_code_bytes(static_cast<int64_t>(code.size()));
  signed_artifact.set_signing_key(hex(public_key, sizeof(public_key)));
  const std::string statement = SignedStatement(signed_artifact);
  unsigned char signature[crypto_sign_BYTES];
  crypto_sign_detached(signature, nullptr, reinterpret_cast<const unsigned char*>(statement.data()),
                       statement.size(), secret_key);
  signed_artifact.set_signature(hex(signature, sizeof(signature)));
  const TrustedKeys trusted({signed_artifact.signing_key()});
  ASSERT_EQ(trusted.Refusal(signed_artifact, code), std::nullopt);

  using Tamper = void (*)(v1::LaunchGeometry&);
  for (const auto& [what, tamper] : std::initializer_list<std::pair<const char*, Tamper>>{
           {"a map moved",
            [](v1::LaunchGeometry& l) { l.mutable_tensor_maps(0)->set_offset(576); }},
           {"a map of another tensor",
            [](v1::LaunchGeometry& l) { l.mutable_tensor_maps(1)->set_tensor("c"); }},
           {"a wider box",
            [](v1::LaunchGeometry& l) { l.mutable_tensor_maps(0)->set_box_inner(32); }},
           {"fewer rows",
            [](v1::LaunchGeometry& l) { l.mutable_tensor_maps(1)->set_box_rows(128); }},
           {"another swizzle",
            [](v1::LaunchGeometry& l) { l.mutable_tensor_maps(0)->set_swizzle_bytes(64); }},
           {"a map left out", [](v1::LaunchGeometry& l) { l.mutable_tensor_maps()->RemoveLast(); }},
           {"a map added", [](v1::LaunchGeometry& l) { *l.add_tensor_maps() = l.tensor_maps(0); }},
           {"a longer argument", [](v1::LaunchGeometry& l) { l.set_argument_bytes(768); }}}) {
    v1::KernelArtifact tampered = signed_artifact;
    tamper(*tampered.mutable_launch());
    EXPECT_TRUE(Contains(trusted.Refusal(tampered, code).value_or(""), "signature does not verify"))
        << what;
  }
}

TEST(AbiPacking, ATmaKernelsArgumentIsItsStructThenRoomForItsTensorMaps) {
  v1::KernelAbi abi = TmaArtifact().abi();
  LaunchArgs args;
  args.tensors = {{"a", reinterpret_cast<const void*>(0x10000)},
                  {"b", reinterpret_cast<const void*>(0x20000)},
                  {"c", reinterpret_cast<const void*>(0x30000)}};
  constexpr size_t kArgumentBytes = sizeof(tt_gemm_tma_args);
  PackedArgs packed = PackArgs(abi, args, kArgumentBytes);
  ASSERT_EQ(packed.size(), kArgumentBytes);
  const auto* bytes = static_cast<const unsigned char*>(packed.data());
  const void* a = nullptr;
  long long m = 0;
  std::memcpy(&a, bytes + offsetof(tt_gemm_args, a), sizeof(a));
  std::memcpy(&m, bytes + offsetof(tt_gemm_args, m), sizeof(m));
  EXPECT_EQ(a, args.tensors["a"]);
  EXPECT_EQ(m, 37);
  EXPECT_TRUE(std::all_of(bytes + abi.struct_bytes(), bytes + kArgumentBytes, [](unsigned char b) {
    return b == 0;
  })) << "the maps' bytes are the encoder's";
  EXPECT_EQ(PackArgs(abi, args).size(), sizeof(tt_gemm_args)) << "no maps: the struct alone";
}

TEST(AbiPacking, AnAbiThisLauncherDoesNotKnowIsRefused) {
  v1::KernelAbi abi;
  abi.set_version(kNewestKnownAbiVersion + 1);
  abi.set_struct_name("tt_gemm_args");
  abi.set_struct_bytes(8);
  EXPECT_TRUE(Contains(UnsupportedAbi(abi).value_or(""),
                       "launch ABI version 4 is not one this launcher knows (2 to 3)"));
  abi.set_version(1);
  EXPECT_TRUE(Contains(UnsupportedAbi(abi).value_or(""), "launch ABI version 1"));
  abi.set_version(kNewestKnownAbiVersion);
  auto* field = abi.add_fields();
  field->set_name("a");
  field->set_kind(v1::AbiField::KIND_TENSOR);
  field->set_bytes(8);
  EXPECT_EQ(UnsupportedAbi(abi), std::nullopt);
  field->set_offset(8);
  EXPECT_TRUE(Contains(UnsupportedAbi(abi).value_or(""), "tt_gemm_args.a: offset 8 does not fit"));
}

}  // namespace
}  // namespace tiletune::launcher
