// What a monitoring stack sees of a real tiletuned: /metrics as Prometheus
// conventions want it (and as deploy/'s dashboard and alerts expect it), and
// JSON log lines on request.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "server/metric_names.h"
#include "tests/support/prometheus_scrape.h"
#include "tests/support/tiletuned_process.h"
#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::testing {
namespace {

const char* TypeName(server::MetricType type) {
  switch (type) {
    case server::MetricType::kCounter: return "counter";
    case server::MetricType::kGauge: return "gauge";
    case server::MetricType::kHistogram: return "histogram";
  }
  return "";
}

TEST(Observability, MetricsFollowPrometheusConventions) {
  TempDir dir;
  TiletunedProcess daemon(dir.path());
  daemon.Start();
  auto stub = daemon.Stub();
  {
    grpc::ClientContext ctx;
    v1::LookupRequest request;
    *request.mutable_key() = RowKey("softmax", 16, 48);
    v1::LookupResponse response;
    ASSERT_TRUE(stub->Lookup(&ctx, request, &response).ok());
  }
  {
    grpc::ClientContext ctx;
    v1::GetJobRequest request;
    request.set_job_id("no-such-job");
    v1::Job job;
    ASSERT_EQ(stub->GetJob(&ctx, request, &job).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  auto text = HttpGet(daemon.metrics_address(), "/metrics");
  ASSERT_TRUE(text);
  const Scrape scrape = ParseScrape(*text);

  // Exactly the families of server/metric_names.h, which deploy/'s lint
  // checks the dashboard and alerts against.
  std::map<std::string, std::string> declared;
  for (const auto& family : server::kMetricFamilies) {
    declared[std::string(family.name)] = TypeName(family.type);
  }
  EXPECT_EQ(scrape.types, declared) << *text;
  for (const auto& [name, type] : scrape.types) {
    if (type == "counter") {
      EXPECT_TRUE(name.ends_with("_total")) << name;
    } else {
      EXPECT_FALSE(name.ends_with("_total")) << name << " is a " << type;
    }
  }
  // Label values are lower-case: states and outcomes as words, not enum
  // constants. Method names stay gRPC's, and le's +Inf is Prometheus's.
  for (const auto& s : scrape.samples) {
    for (const auto& [label, value] : s.labels) {
      if (label == "method" || label == "le") continue;
      EXPECT_TRUE(
          std::none_of(value.begin(), value.end(), [](unsigned char c) { return std::isupper(c); }))
          << s.name << "{" << label << "=\"" << value << "\"}";
    }
  }

  // build_info says what `tiletuned --version` says.
  const auto version = RunCommand({BinaryPath("tiletuned"), "--version"});
  ASSERT_EQ(version.out.rfind("tiletuned ", 0), 0u) << version.out;
  EXPECT_EQ(scrape.Value("tiletune_build_info",
                         {{"kernel_library", TILETUNE_KERNEL_LIBRARY_VERSION},
                          {"version", version.out.substr(10, version.out.find('\n') - 10)}}),
            "1")
      << *text;
  EXPECT_EQ(scrape.Value("tiletune_lookups_total", {{"result", "miss"}}), "1");
  // Every state and outcome from the start, 0 until one is reached.
  for (const char* state : {"queued", "running", "succeeded", "failed", "cancelled"}) {
    EXPECT_EQ(scrape.Value("tiletune_jobs", {{"state", state}}), "0") << state;
  }
  for (const char* status : {"ok", "timeout", "crash", "wrong_result", "skipped_known_failure"}) {
    EXPECT_EQ(scrape.Value("tiletune_trials_total", {{"status", status}}), "0") << status;
  }
  for (const char* state : {"succeeded", "failed"}) {
    EXPECT_EQ(scrape.Value("tiletune_jobs_finished_total", {{"state", state}}), "0") << state;
  }
  EXPECT_EQ(scrape.Value("tiletune_worker_restarts_total", {{"device", "cpu:0"}}), "0");
  EXPECT_EQ(scrape.Value("tiletune_device_quarantined", {{"device", "cpu:0"}}), "0");

  // Every call counted under its method and code, every method and code
  // present before its first call.
  EXPECT_EQ(scrape.Value("tiletune_grpc_requests_total", {{"method", "Lookup"}, {"code", "ok"}}),
            "1");
  EXPECT_EQ(
      scrape.Value("tiletune_grpc_requests_total", {{"method", "GetJob"}, {"code", "not_found"}}),
      "1");
  EXPECT_EQ(scrape.Value("tiletune_grpc_request_duration_seconds_count", {{"method", "Lookup"}}),
            "1");
  EXPECT_EQ(scrape.Value("tiletune_grpc_request_duration_seconds_bucket",
                         {{"method", "Lookup"}, {"le", "+Inf"}}),
            "1");
  const auto* service = v1::LookupRequest::descriptor()->file()->FindServiceByName("TuningService");
  ASSERT_TRUE(service);
  for (int m = 0; m < service->method_count(); ++m) {
    const std::string& method = service->method(m)->name();
    std::set<std::string> codes;
    for (const auto& s : scrape.samples) {
      if (s.name == "tiletune_grpc_requests_total" && s.labels.at("method") == method) {
        codes.insert(s.labels.at("code"));
      }
    }
    EXPECT_EQ(codes.size(), 17u) << method;
    EXPECT_FALSE(
        scrape.Value("tiletune_grpc_request_duration_seconds_count", {{"method", method}}).empty())
        << method;
  }
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
}

TEST(Observability, JsonLogsAreOneObjectALine) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--log-format", "json"});
  daemon.Start();
  {
    auto stub = daemon.Stub();
    grpc::ClientContext ctx;
    v1::LookupRequest request;
    *request.mutable_key() = RowKey("softmax", 16, 48);
    v1::LookupResponse response;
    ASSERT_TRUE(stub->Lookup(&ctx, request, &response).ok());
  }
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);

  const std::regex time(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d)");
  const std::set<std::string> levels = {"trace", "debug", "info", "warning", "error", "critical"};
  std::istringstream lines(daemon.log());
  int parsed = 0;
  bool stopped = false;
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json object;
    ASSERT_NO_THROW(object = nlohmann::json::parse(line)) << line;
    ASSERT_TRUE(object.is_object()) << line;
    EXPECT_TRUE(std::regex_match(object.at("time").get<std::string>(), time)) << line;
    EXPECT_TRUE(levels.contains(object.at("level").get<std::string>())) << line;
    EXPECT_TRUE(object.at("message").is_string()) << line;
    EXPECT_TRUE(object.at("fields").is_object()) << line;
    stopped |= object.at("message") == "stopped cleanly";
    ++parsed;
  }
  EXPECT_GT(parsed, 3) << daemon.log();
  EXPECT_TRUE(stopped) << daemon.log();
}

}  // namespace
}  // namespace tiletune::testing
