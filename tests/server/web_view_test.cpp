// The web view on a real daemon's HTTP port: its JSON is the API's (auth,
// page limits, validation), user text comes back escaped, cancel needs a
// writer, and `tiletune report --html` writes a page a job name cannot
// break out of.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/support/daemon_calls.h"
#include "tests/support/gemm_test_key.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

constexpr char kAliceToken[] = "tt-alice-web-5e1d9c7b3a";
constexpr char kBobToken[] = "tt-bob-web-2f4a6c8e0d";
constexpr char kHostileName[] = "</script><script>alert(1)</script> & \"quoted\"";

httplib::Client Http(const TiletunedProcess& daemon) {
  const auto& address = daemon.metrics_address();
  const auto colon = address.rfind(':');
  httplib::Client client(address.substr(0, colon), std::stoi(address.substr(colon + 1)));
  client.set_read_timeout(60, 0);
  return client;
}

httplib::Headers Bearer(const std::string& token) {
  return {{"Authorization", "Bearer " + token}};
}

// A one-kernel host job that ends after a few variants.
v1::JobSpec SmallJob(const std::string& name, int variants) {
  v1::JobSpec spec;
  spec.set_name(name);
  auto* key = spec.add_kernels();
  key->set_op("softmax");
  key->set_input_dtype(v1::DTYPE_F32);
  key->set_output_dtype(v1::DTYPE_F32);
  key->set_accumulate_dtype(v1::DTYPE_F32);
  auto* rows = key->add_shape();
  rows->set_name("rows");
  rows->set_size(64);
  auto* cols = key->add_shape();
  cols->set_name("cols");
  cols->set_size(1000);
  spec.mutable_budget()->set_max_variants(variants);
  return spec;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(WebView, AnswersWithTheApisDataEscapedAndWithinItsLimits) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--max-page-size", "50"});
  daemon.Start();
  auto stub = daemon.Stub();
  const std::string id = SubmitJob(*stub, SmallJob(kHostileName, 4));
  ASSERT_EQ(WaitForJob(*stub, id).state(), v1::JOB_SUCCEEDED);
  auto http = Http(daemon);

  auto page = http.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<script src=\"/web/app.js\"></script>"), std::string::npos);
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("script-src 'self'"),
            std::string::npos);
  auto script = http.Get("/web/app.js");
  ASSERT_TRUE(script);
  EXPECT_EQ(script->status, 200);
  EXPECT_EQ(script->body.find("innerHTML"), std::string::npos) << "user text must go in as text";

  auto job = http.Get(("/api/jobs/" + id).c_str());
  ASSERT_TRUE(job);
  ASSERT_EQ(job->status, 200) << job->body;
  EXPECT_EQ(job->body.find('<'), std::string::npos) << job->body;
  const auto parsed = nlohmann::json::parse(job->body);
  EXPECT_EQ(parsed["spec"]["name"], kHostileName);
  EXPECT_EQ(parsed["state"], "JOB_SUCCEEDED");

  // The trials, page by page, are the API's.
  v1::ListTrialsRequest request;
  request.set_job_id(id);
  v1::ListTrialsResponse api;
  grpc::ClientContext call;
  ASSERT_TRUE(stub->ListTrials(&call, request, &api).ok());
  ASSERT_GT(api.trials_size(), 1);
  ASSERT_TRUE(api.has_record());
  std::vector<std::string> ids;
  std::string token;
  do {
    auto trials = http.Get(("/api/jobs/" + id + "/items/0/trials?page_size=1" +
                            (token.empty() ? "" : "&page_token=" + token))
                               .c_str());
    ASSERT_TRUE(trials);
    ASSERT_EQ(trials->status, 200) << trials->body;
    const auto body = nlohmann::json::parse(trials->body);
    ASSERT_EQ(body["trials"].size(), 1u);
    ids.push_back(body["trials"][0]["id"]);
    if (ids.size() == 1) {
      EXPECT_DOUBLE_EQ(body["record"]["speedup"].get<double>(), api.record().speedup());
    }
    token = body["next_page_token"];
  } while (!token.empty() && ids.size() <= static_cast<size_t>(api.trials_size()));
  ASSERT_EQ(ids.size(), static_cast<size_t>(api.trials_size()));
  for (int i = 0; i < api.trials_size(); ++i) EXPECT_EQ(ids[i], std::to_string(api.trials(i).id()));

  // The API's limits and validation, as HTTP statuses naming the field.
  for (const auto& [path, status, field] : std::vector<std::tuple<std::string, int, std::string>>{
           {"/api/jobs?page_size=51", 400, "page_size"},
           {"/api/jobs?page_size=ten", 400, "page_size"},
           {"/api/jobs?state=JOB_NAPPING", 400, "state"},
           {"/api/records?op=no_such_op", 400, "op"},
           {"/api/jobs/" + id + "/items/1/trials", 400, "item_index"},
           {"/api/jobs/" + id + "/items/0/trials?page_token=x", 400, "page_token"},
           {"/api/jobs/j-nothing", 404, "job_id"}}) {
    auto answer = http.Get(path.c_str());
    ASSERT_TRUE(answer) << path;
    EXPECT_EQ(answer->status, status) << path << ": " << answer->body;
    EXPECT_NE(answer->body.find(field), std::string::npos) << path << ": " << answer->body;
  }
  auto devices = http.Get("/api/devices");
  ASSERT_TRUE(devices);
  EXPECT_EQ(nlohmann::json::parse(devices->body)["devices"][0]["id"], "cpu:0");

  // The shared page: the name is text in the title and in the data, never markup.
  const auto file = dir.path() / "job.html";
  const auto report = RunCommand({BinaryPath("tiletune"), "--server", daemon.address(), "report",
                                  id, "--html", file.string()});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string html = ReadFile(file);
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted"),
            std::string::npos);
  EXPECT_NE(html.find("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"), std::string::npos);
  // Two scripts (data, code), each closed once.
  size_t closings = 0;
  for (size_t at = html.find("</script"); at != std::string::npos;
       at = html.find("</script", at + 1)) {
    ++closings;
  }
  EXPECT_EQ(closings, 2u);
  const auto missing = RunCommand({BinaryPath("tiletune"), "--server", daemon.address(), "report",
                                   "j-nothing", "--html", (dir.path() / "x.html").string()});
  EXPECT_EQ(missing.exit_code, 4) << missing.err;
}

TEST(WebView, OffLeavesThePortToMetricsAndHealth) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--web-view", "false"});
  daemon.Start();
  auto http = Http(daemon);
  for (const char* path : {"/", "/web/app.js", "/api/jobs"}) {
    auto page = http.Get(path);
    ASSERT_TRUE(page) << path;
    EXPECT_EQ(page->status, 404) << path;
  }
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
}

TEST(WebView, ClosedReadsAndCancelNeedTheApisCredentials) {
  TempDir dir;
  const auto tokens = dir.path() / "tokens";
  std::ofstream(tokens) << "alice " << kAliceToken << "\nbob " << kBobToken << "\n";
  std::filesystem::create_directories(dir.path() / "data");
  TiletunedProcess daemon(dir.path() / "data",
                          {"--auth-tokens-file", tokens.string(), "--auth-writers", "alice",
                           "--auth-open-reads", "false"});
  daemon.Start();
  auto http = Http(daemon);

  // Pages carry no data: they load without a credential; the data does not.
  EXPECT_EQ(http.Get("/")->status, 200);
  auto anonymous = http.Get("/api/jobs");
  EXPECT_EQ(anonymous->status, 401) << anonymous->body;
  EXPECT_NE(anonymous->body.find("ListJobs needs a credential"), std::string::npos);
  // A token in the URL is not a credential.
  EXPECT_EQ(http.Get((std::string("/api/jobs?token=") + kAliceToken).c_str())->status, 401);
  EXPECT_EQ(http.Get("/api/jobs", Bearer("tt-wrong"))->status, 401);
  EXPECT_EQ(http.Get("/api/jobs", Bearer(kBobToken))->status, 200);

  // A job that runs until cancelled.
  auto channel = grpc::CreateChannel(daemon.address(), grpc::InsecureChannelCredentials());
  auto stub = v1::TuningService::NewStub(channel);
  v1::SubmitJobRequest submit;
  // As OccupyDevice's (which submits without a credential).
  auto& spec = *submit.mutable_spec();
  spec.set_name("long");
  spec.set_strategy(v1::STRATEGY_EXHAUSTIVE);
  spec.mutable_budget()->set_max_variants(200);
  spec.mutable_budget()->set_max_seconds(3600);
  *spec.add_kernels() = GemmKey(512, 512, 512);
  v1::SubmitJobResponse submitted;
  grpc::ClientContext call;
  call.AddMetadata("authorization", std::string("Bearer ") + kAliceToken);
  const auto status = stub->SubmitJob(&call, submit, &submitted);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const std::string path = "/api/jobs/" + submitted.job_id() + "/cancel";

  auto no_credential = http.Post(path.c_str(), "{}", "application/json");
  EXPECT_EQ(no_credential->status, 401) << no_credential->body;
  auto reader = http.Post(path.c_str(), Bearer(kBobToken), "{}", "application/json");
  EXPECT_EQ(reader->status, 403) << reader->body;
  EXPECT_NE(reader->body.find("'bob' is authenticated but not allowed"), std::string::npos);
  auto as_form =
      http.Post(path.c_str(), Bearer(kAliceToken), "a=b", "application/x-www-form-urlencoded");
  EXPECT_EQ(as_form->status, 415);
  auto still = http.Get(("/api/jobs/" + submitted.job_id()).c_str(), Bearer(kBobToken));
  EXPECT_NE(nlohmann::json::parse(still->body)["state"], "JOB_CANCELLED");

  auto writer = http.Post(path.c_str(), Bearer(kAliceToken), "{}", "application/json");
  ASSERT_EQ(writer->status, 200) << writer->body;
  EXPECT_EQ(nlohmann::json::parse(writer->body)["state"], "JOB_CANCELLED");
  for (const char* secret : {kAliceToken, kBobToken}) {
    EXPECT_EQ(daemon.log().find(secret), std::string::npos) << "a token reached the log";
  }
}

}  // namespace
}  // namespace tiletune::testing
