// GetKernel end to end: a host GEMM tuned by the real daemon is fetched as
// an artifact, written to disk, loaded with dlopen and run through the
// argument ABI the answer describes (offsets, shapes, chain slots), with no
// help from tiletune's own kernel code; its output is checked against a
// float64 reference. Then the answers short of an artifact: unchanged, a
// miss, an op graph, and an artifact over the size limit.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

#include <google/protobuf/util/json_util.h>

#include "runtime/content_hash.h"
#include "tests/support/daemon_calls.h"
#include "tests/support/poll_until.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

using namespace std::chrono_literals;

struct Fetched {
  grpc::Status status;
  v1::GetKernelResponse head;
  std::string code;
  int messages = 0;
};

Fetched Fetch(v1::TuningService::Stub& stub, const v1::GetKernelRequest& request) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 60s);
  auto reader = stub.GetKernel(&ctx, request);
  Fetched f;
  v1::GetKernelResponse message;
  while (reader->Read(&message)) {
    if (f.messages++ == 0) f.head = message;
    f.code += message.code_chunk();
  }
  f.status = reader->Finish();
  return f;
}

v1::GetKernelRequest RequestFor(const v1::KernelKey& key) {
  v1::GetKernelRequest request;
  *request.mutable_key() = key;
  return request;
}

// `key` a decode GEMM (DecodeGemmKey): its winner is tried first.
void TuneToWinner(v1::TuningService::Stub& stub, const v1::KernelKey& key) {
  v1::JobSpec spec;
  spec.set_strategy(v1::STRATEGY_RANDOM);
  spec.set_seed(kDecodeGemmSeed);
  spec.mutable_budget()->set_max_variants(5);
  *spec.add_kernels() = key;
  WatchJobToEnd(stub, SubmitJob(stub, spec));
}

const v1::AbiField& Field(const v1::KernelAbi& abi, const std::string& name) {
  for (const auto& f : abi.fields()) {
    if (f.name() == name) return f;
  }
  ADD_FAILURE() << "no field " << name << " in " << abi.ShortDebugString();
  static const v1::AbiField kNone;
  return kNone;
}

template <class T>
void Put(std::vector<unsigned char>& s, int64_t offset, T value) {
  std::memcpy(s.data() + offset, &value, sizeof(T));
}

std::vector<float> Random(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

TEST(KernelArtifactFlow, AServedHostGemmRunsFromItsArtifactAndAbiAlone) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--host-cpus", "1", "--artifact-chunk-bytes", "4096"});
  daemon.Start();
  auto stub = daemon.Stub();
  const int64_t m = 1, n = kDecodeGemmN, k = kDecodeGemmK;
  const auto key = DecodeGemmKey({"bias", "relu"});
  TuneToWinner(*stub, key);

  v1::GetKernelRequest request = RequestFor(key);
  request.set_include_source(true);
  const Fetched f = Fetch(*stub, request);
  ASSERT_TRUE(f.status.ok()) << f.status.error_message();
  ASSERT_TRUE(f.head.has_artifact())
      << "fallback: " << f.head.fallback().ShortDebugString()
      << "\nrecord: " << f.head.record().decision().ShortDebugString();
  const v1::KernelArtifact& artifact = f.head.artifact();
  EXPECT_EQ(artifact.format(), v1::KernelArtifact::FORMAT_HOST_SHARED_OBJECT);
  EXPECT_EQ(static_cast<int64_t>(f.code.size()), artifact.code_bytes());
  EXPECT_GT(f.messages, 2) << "4 KiB chunks: the code streams over several messages";
  EXPECT_EQ(runtime::ContentHash(f.code), artifact.content_hash());
  EXPECT_EQ(runtime::ContentHash(artifact.source()), artifact.source_hash());
  EXPECT_EQ(artifact.source_hash(), f.head.record().config().source_hash());
  EXPECT_EQ(artifact.kernel_name(), f.head.record().config().kernel_name());
  EXPECT_FALSE(artifact.target().empty());
  EXPECT_FALSE(artifact.compile_options().empty());

  const v1::KernelAbi& abi = artifact.abi();
  EXPECT_EQ(abi.struct_name(), "tt_gemm_args");
  EXPECT_EQ(abi.version(), 3);
  EXPECT_EQ(abi.passing(), v1::KernelAbi::PASSING_POINTER);
  EXPECT_EQ(Field(abi, "a").role(), v1::AbiField::ROLE_INPUT);
  EXPECT_EQ(Field(abi, "c").role(), v1::AbiField::ROLE_OUTPUT);
  EXPECT_EQ(std::vector<int64_t>(Field(abi, "a").shape().begin(), Field(abi, "a").shape().end()),
            (std::vector<int64_t>{1, m, k}));
  const v1::AbiField& chain = Field(abi, "chain");
  ASSERT_EQ(chain.chain_size(), 2);
  EXPECT_EQ(chain.chain(0).op(), "bias");
  EXPECT_TRUE(chain.chain(0).tensor());
  EXPECT_EQ(chain.chain(1).op(), "relu");
  EXPECT_FALSE(chain.chain(1).tensor());

  // A client's side: the code on disk, loaded, called with the struct packed
  // from the ABI alone.
  const std::string path = (dir.path() / "served.so").string();
  std::ofstream(path, std::ios::binary) << f.code;
  void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << ::dlerror();
  using Entry = int (*)(const void*);
  const auto entry = reinterpret_cast<Entry>(::dlsym(library, artifact.entry().c_str()));
  ASSERT_NE(entry, nullptr) << artifact.entry();

  std::mt19937 rng(3);
  const std::vector<float> a = Random(m * k, rng), b = Random(k * n, rng), bias = Random(n, rng);
  std::vector<float> c(m * n, std::nanf(""));
  std::vector<unsigned char> args(abi.struct_bytes(), 0);
  Put<const void*>(args, Field(abi, "a").offset(), a.data());
  Put<const void*>(args, Field(abi, "b").offset(), b.data());
  Put<void*>(args, Field(abi, "c").offset(), c.data());
  for (const auto& field : abi.fields()) {
    if (field.kind() == v1::AbiField::KIND_INT64)
      Put<long long>(args, field.offset(), field.value());
  }
  // tensors[0] is bias's (slot 0); the scalars after the tensors stay 0.
  Put<const void*>(args, chain.offset(), bias.data());
  ASSERT_EQ(entry(args.data()), 0);
  ::dlclose(library);
  double worst = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = bias[j];
      for (int64_t q = 0; q < k; ++q) want += double{a[i * k + q]} * b[q * n + j];
      want = std::max(want, 0.0);
      worst = std::max(worst, std::abs(c[i * n + j] - want) / (std::abs(want) + 1.0));
    }
  }
  EXPECT_LT(worst, 1e-4);

  // A client holding that artifact is told so, with no code.
  v1::GetKernelRequest again = RequestFor(key);
  again.set_cached_content_hash(artifact.content_hash());
  const Fetched cached = Fetch(*stub, again);
  ASSERT_TRUE(cached.status.ok());
  EXPECT_TRUE(cached.head.unchanged());
  EXPECT_TRUE(cached.code.empty());
  EXPECT_EQ(cached.head.artifact().content_hash(), artifact.content_hash());

  // A miss answers the fallback and no artifact.
  const Fetched miss = Fetch(*stub, RequestFor(GemmKey(33, 17, 5)));
  ASSERT_TRUE(miss.status.ok()) << miss.status.error_message();
  EXPECT_FALSE(miss.head.has_artifact());
  EXPECT_EQ(miss.head.fallback().library(), "host-naive");
  EXPECT_TRUE(miss.code.empty());

  // An op graph names the field.
  v1::KernelKey graph;
  auto* op = graph.add_ops();
  op->set_op("softmax");
  op->add_inputs("x");
  op->set_output("y");
  auto* x = graph.add_tensors();
  x->set_name("x");
  x->add_dims("r");
  x->add_dims("c");
  for (const auto& [name, size] : {std::pair{"r", 4}, std::pair{"c", 8}}) {
    auto* d = graph.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  const Fetched graph_answer = Fetch(*stub, RequestFor(graph));
  EXPECT_EQ(graph_answer.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(graph_answer.status.error_message().find("key"), std::string::npos)
      << graph_answer.status.error_message();

  // Past max_artifact_bytes: refused, naming the limit.
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
  TiletunedProcess small(dir.path(), {"--host-cpus", "1", "--max-artifact-bytes", "1000"});
  small.Start();
  const Fetched too_big = Fetch(*small.Stub(), RequestFor(key));
  EXPECT_EQ(too_big.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(too_big.status.error_message().find("max_artifact_bytes"), std::string::npos)
      << too_big.status.error_message();
}

// Export/import carries what GetKernel needs: a record imported on another
// daemon of the class is rebuilt there from the record alone (the same
// source, checked by its hash) and served signed by that daemon.
TEST(KernelArtifactFlow, ARecordImportedOnAnotherDaemonOfItsClassIsServedThere) {
  TempDir dir;
  TiletunedProcess a(dir.path() / "a", {"--host-cpus", "1"});
  TiletunedProcess b(dir.path() / "b", {"--host-cpus", "1"});
  std::filesystem::create_directories(dir.path() / "a");
  std::filesystem::create_directories(dir.path() / "b");
  a.Start();
  const auto key = DecodeGemmKey({"bias", "relu"});
  TuneToWinner(*a.Stub(), key);
  const Fetched on_a = Fetch(*a.Stub(), RequestFor(key));
  ASSERT_TRUE(on_a.head.has_artifact()) << on_a.head.fallback().ShortDebugString();

  std::string jsonl;
  {
    grpc::ClientContext ctx;
    auto reader = a.Stub()->ExportRecords(&ctx, {});
    v1::ExportLine line;
    while (reader->Read(&line)) {
      std::string json;
      ASSERT_TRUE(google::protobuf::util::MessageToJsonString(line, &json).ok());
      jsonl += json + "\n";
    }
    ASSERT_TRUE(reader->Finish().ok());
  }
  b.Start();
  EXPECT_FALSE(Fetch(*b.Stub(), RequestFor(key)).head.has_artifact()) << "b has no record yet";
  v1::ImportRecordsRequest import;
  import.set_jsonl(jsonl);
  // Served as it came: verifying imports first is import_verification_flow_test's.
  import.set_trust(true);
  v1::ImportRecordsResponse imported;
  {
    grpc::ClientContext ctx;
    const auto status = b.Stub()->ImportRecords(&ctx, import, &imported);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  ASSERT_EQ(imported.rejects_size(), 0) << imported.ShortDebugString();
  const Fetched on_b = Fetch(*b.Stub(), RequestFor(key));
  ASSERT_TRUE(on_b.status.ok()) << on_b.status.error_message();
  ASSERT_TRUE(on_b.head.has_artifact()) << on_b.head.fallback().ShortDebugString();
  EXPECT_EQ(on_b.head.artifact().source_hash(), on_a.head.artifact().source_hash());
  EXPECT_EQ(on_b.head.artifact().entry(), on_a.head.artifact().entry());
  EXPECT_EQ(runtime::ContentHash(on_b.code), on_b.head.artifact().content_hash());
  EXPECT_NE(on_b.head.artifact().signing_key(), on_a.head.artifact().signing_key())
      << "each daemon signs with its own key";
}

// Lookup's opt-in: a HIT carries the kernel GetKernel serves, code included
// unless the client holds it; a miss says what to run instead; BatchLookup
// attaches each.
TEST(KernelArtifactFlow, LookupAttachesTheServedKernelWhenAsked) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--host-cpus", "1"});
  daemon.Start();
  auto stub = daemon.Stub();
  const auto key = DecodeGemmKey({"bias", "relu"});
  TuneToWinner(*stub, key);
  const Fetched served = Fetch(*stub, RequestFor(key));
  ASSERT_TRUE(served.head.has_artifact()) << served.head.fallback().ShortDebugString();

  const auto lookup = [&](const v1::LookupRequest& request) {
    grpc::ClientContext ctx;
    v1::LookupResponse response;
    EXPECT_TRUE(stub->Lookup(&ctx, request, &response).ok());
    return response;
  };
  v1::LookupRequest request;
  *request.mutable_key() = key;
  EXPECT_FALSE(lookup(request).has_artifact()) << "attaching is opt-in";
  request.set_attach_artifact(true);
  const v1::LookupResponse hit = lookup(request);
  ASSERT_EQ(hit.result(), v1::LookupResponse::RESULT_HIT);
  ASSERT_TRUE(hit.has_artifact()) << hit.artifact_fallback().ShortDebugString();
  EXPECT_EQ(hit.artifact().content_hash(), served.head.artifact().content_hash());
  EXPECT_EQ(hit.artifact().signature(), served.head.artifact().signature());
  EXPECT_EQ(hit.artifact_code(), served.code);

  request.set_cached_content_hash(hit.artifact().content_hash());
  const v1::LookupResponse cached = lookup(request);
  EXPECT_EQ(cached.artifact().content_hash(), hit.artifact().content_hash());
  EXPECT_TRUE(cached.artifact_code().empty()) << "the client holds that code";

  v1::BatchLookupRequest batch;
  *batch.add_requests() = request;
  batch.mutable_requests(0)->clear_cached_content_hash();
  v1::LookupRequest& miss = *batch.add_requests();
  *miss.mutable_key() = GemmKey(33, 17, 5);
  miss.set_attach_artifact(true);
  grpc::ClientContext ctx;
  v1::BatchLookupResponse answers;
  ASSERT_TRUE(stub->BatchLookup(&ctx, batch, &answers).ok());
  ASSERT_EQ(answers.responses_size(), 2);
  EXPECT_EQ(answers.responses(0).artifact_code(), served.code);
  EXPECT_FALSE(answers.responses(1).has_artifact());
  EXPECT_EQ(answers.responses(1).artifact_fallback().library(), "host-naive");
}

}  // namespace
}  // namespace tiletune::testing
