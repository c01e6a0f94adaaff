#include "server/daemon_config.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/tiletuned_process.h"

namespace tiletune::server {
namespace {

ParsedConfig Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "tiletuned");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ParseDaemonConfig(static_cast<int>(argv.size()), argv.data());
}

TEST(DaemonConfig, DefaultsAreSaneAndDbFollowsDataDir) {
  auto parsed = Parse({"--data-dir", "/tmp/x"});
  ASSERT_TRUE(parsed.config);
  EXPECT_EQ(parsed.config->db_path, "/tmp/x/tiletune.db");
  EXPECT_EQ(parsed.config->listen, "127.0.0.1:7733");
  EXPECT_FALSE(ValidateConfig(DaemonConfig{}));
}

// Usage errors exit 2 (CLI11's own codes, 109 for an unknown flag, say
// nothing to an operator's script); --help and --version exit 0.
TEST(DaemonConfig, MalformedFlagsExitTwoAndHelpExitsZero) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--bogus"}, {"--max-batch-lookup"}, {"stray"}}) {
    const auto parsed = Parse(args);
    ASSERT_TRUE(parsed.exit_code) << args[0];
    EXPECT_EQ(*parsed.exit_code, 2) << args[0];
  }
  EXPECT_EQ(Parse({"--help"}).exit_code, 0);
  EXPECT_EQ(Parse({"--version"}).exit_code, 0);
}

TEST(DaemonConfig, FileThenFlagsOverride) {
  testing::TempDir dir;
  const auto path = dir.path() / "tiletuned.yaml";
  std::ofstream(path) << "listen: 0.0.0.0:9000\nmax_batch_lookup: 7\nbackends: [host]\n"
                         "min_speedup: 1.1\n";
  auto parsed = Parse({"--config", path.string(), "--max-batch-lookup", "9"});
  ASSERT_TRUE(parsed.config) << parsed.error->message;
  EXPECT_EQ(parsed.config->listen, "0.0.0.0:9000");
  EXPECT_EQ(parsed.config->max_batch_lookup, 9);
  EXPECT_EQ(parsed.config->backends, std::vector<std::string>{"host"});
  EXPECT_DOUBLE_EQ(parsed.config->tuning.min_speedup, 1.1);
}

TEST(DaemonConfig, UnknownKeysAndBadValuesNameTheSetting) {
  testing::TempDir dir;
  const auto path = dir.path() / "bad.yaml";
  std::ofstream(path) << "listen: x:1\nmax_batch_lookpu: 3\n";
  auto parsed = Parse({"--config", path.string()});
  ASSERT_TRUE(parsed.error);
  EXPECT_NE(parsed.error->message.find("unknown setting 'max_batch_lookpu' (line 2)"),
            std::string::npos)
      << parsed.error->message;

  std::ofstream(path) << "compile_threads: lots\n";
  parsed = Parse({"--config", path.string()});
  ASSERT_TRUE(parsed.error);
  EXPECT_NE(parsed.error->message.find("compile_threads"), std::string::npos);

  parsed = Parse({"--run-limit-min-seconds", "10", "--run-limit-max-seconds", "5"});
  ASSERT_TRUE(parsed.error);
  EXPECT_NE(parsed.error->message.find("run_limit_min_seconds"), std::string::npos);
  EXPECT_TRUE(Parse({"--config", (dir.path() / "missing.yaml").string()}).error);
}

TEST(DaemonConfig, ListenReusePortIsOffUnlessAsked) {
  EXPECT_FALSE(DaemonConfig{}.listen_reuse_port);
  EXPECT_NE(ConfigToYaml(DaemonConfig{}).find("listen_reuse_port: \"false\""), std::string::npos);
  auto parsed = Parse({"--listen-reuse-port"});
  ASSERT_TRUE(parsed.config) << parsed.error->message;
  EXPECT_TRUE(parsed.config->listen_reuse_port);
}

TEST(DaemonConfig, CallCeilingsHaveDefaultsAndMustBePositive) {
  EXPECT_DOUBLE_EQ(DaemonConfig{}.max_request_seconds, 60);
  EXPECT_DOUBLE_EQ(DaemonConfig{}.max_stream_seconds, 3600);
  testing::TempDir dir;
  const auto path = dir.path() / "tiletuned.yaml";
  std::ofstream(path) << "max_stream_seconds: 90\n";
  auto parsed = Parse({"--config", path.string(), "--max-request-seconds", "2.5"});
  ASSERT_TRUE(parsed.config) << parsed.error->message;
  EXPECT_DOUBLE_EQ(parsed.config->max_request_seconds, 2.5);
  EXPECT_DOUBLE_EQ(parsed.config->max_stream_seconds, 90);
  parsed = Parse({"--max-stream-seconds", "0"});
  ASSERT_TRUE(parsed.error);
  EXPECT_EQ(parsed.error->message, "max_stream_seconds must be positive");
}

TEST(DaemonConfig, TextLimitsHaveDefaultsAndMustBePositive) {
  const DaemonConfig defaults;
  EXPECT_EQ(defaults.key_limits.max_name_bytes, 256);
  EXPECT_EQ(defaults.max_text_bytes, 4096);
  auto parsed = Parse({"--max-name-bytes", "64", "--max-text-bytes", "100000"});
  ASSERT_TRUE(parsed.config) << parsed.error->message;
  EXPECT_EQ(parsed.config->key_limits.max_name_bytes, 64);
  EXPECT_EQ(parsed.config->max_text_bytes, 100000);
  EXPECT_NE(ConfigToYaml(*parsed.config).find("max_name_bytes: \"64\""), std::string::npos);
  parsed = Parse({"--max-name-bytes", "0"});
  ASSERT_TRUE(parsed.error);
  EXPECT_EQ(parsed.error->message, "max_name_bytes must be positive");
  parsed = Parse({"--max-text-bytes", "0"});
  ASSERT_TRUE(parsed.error);
  EXPECT_EQ(parsed.error->message, "max_text_bytes must be positive");
}

TEST(DaemonConfig, CompilersRunNicerThanTheDaemon) {
  EXPECT_EQ(DaemonConfig{}.tuning.compile_niceness, 10);
  auto parsed = Parse({"--compile-niceness", "0"});
  ASSERT_TRUE(parsed.config) << parsed.error->message;
  EXPECT_EQ(parsed.config->tuning.compile_niceness, 0);
  for (const char* bad : {"-1", "20"}) {
    parsed = Parse({"--compile-niceness", bad});
    ASSERT_TRUE(parsed.error) << bad;
    EXPECT_EQ(parsed.error->message, "compile_niceness must be between 0 and 19");
  }
}

TEST(DaemonConfig, BaselineAlgorithmsDefaultToEightWithinOneTo256) {
  EXPECT_EQ(DaemonConfig{}.tuning.baseline_algorithms, 8);
  testing::TempDir dir;
  const auto path = dir.path() / "tiletuned.yaml";
  std::ofstream(path) << "baseline_algorithms: 3\n";
  auto parsed = Parse({"--config", path.string()});
  ASSERT_TRUE(parsed.config) << parsed.error->message;
  EXPECT_EQ(parsed.config->tuning.baseline_algorithms, 3);
  for (const char* good : {"1", "256"}) {
    parsed = Parse({"--baseline-algorithms", good});
    ASSERT_TRUE(parsed.config) << good << ": " << parsed.error->message;
    EXPECT_EQ(parsed.config->tuning.baseline_algorithms, std::stoi(good));
  }
  for (const char* bad : {"0", "-2", "257"}) {
    parsed = Parse({"--baseline-algorithms", bad});
    ASSERT_TRUE(parsed.error) << bad;
    EXPECT_EQ(parsed.error->message, "baseline_algorithms must be between 1 and 256");
  }
  parsed = Parse({"--baseline-algorithms", "eight"});
  ASSERT_TRUE(parsed.error);
  EXPECT_EQ(parsed.error->message, "--baseline-algorithms: 'eight' is not a valid value");
}

TEST(DaemonConfig, TuningSchedPolicyIsOtherBatchOrIdle) {
  EXPECT_EQ(DaemonConfig{}.tuning.sched_policy, runtime::SchedPolicy::kOther);
  auto parsed = Parse({"--tuning-sched-policy", "idle"});
  ASSERT_TRUE(parsed.config) << parsed.error->message;
  EXPECT_EQ(parsed.config->tuning.sched_policy, runtime::SchedPolicy::kIdle);
  EXPECT_NE(ConfigToYaml(*parsed.config).find("tuning_sched_policy: \"idle\""), std::string::npos);
  parsed = Parse({"--tuning-sched-policy", "realtime"});
  ASSERT_TRUE(parsed.error);
  EXPECT_EQ(parsed.error->message, "--tuning-sched-policy: 'realtime' is not a valid value");
}

TEST(DaemonConfig, ReferenceSamplingSettings) {
  const tuner::TuningLimits defaults;
  EXPECT_DOUBLE_EQ(defaults.reference_full_max_flops, 1e10);
  EXPECT_EQ(defaults.reference_sample_rows, 64);
  EXPECT_EQ(defaults.reference_threads, 0);
  testing::TempDir dir;
  const auto path = dir.path() / "tiletuned.yaml";
  std::ofstream(path) << "reference_full_max_flops: 2.5e9\nreference_sample_rows: 16\n";
  auto parsed = Parse({"--config", path.string(), "--reference-threads", "4"});
  ASSERT_TRUE(parsed.config) << parsed.error->message;
  EXPECT_DOUBLE_EQ(parsed.config->tuning.reference_full_max_flops, 2.5e9);
  EXPECT_EQ(parsed.config->tuning.reference_sample_rows, 16);
  EXPECT_EQ(parsed.config->tuning.reference_threads, 4);

  auto error = [](std::vector<std::string> args) {
    auto result = Parse(std::move(args));
    return result.error ? result.error->message : std::string("no error");
  };
  EXPECT_EQ(error({"--reference-full-max-flops", "0"}),
            "reference_full_max_flops must be positive");
  EXPECT_EQ(error({"--reference-sample-rows", "0"}), "reference_sample_rows must be positive");
  EXPECT_EQ(error({"--reference-threads", "-1"}), "reference_threads must not be negative");
}

TEST(DaemonConfig, FleetViewAndHostCpuSettings) {
  const DaemonConfig defaults;
  EXPECT_DOUBLE_EQ(defaults.fleet_heartbeat_seconds, 5);
  EXPECT_DOUBLE_EQ(defaults.fleet_gone_after_seconds, 30);
  EXPECT_EQ(defaults.host_cpus, 0);
  auto parsed = Parse(
      {"--fleet-heartbeat-seconds", "0.5", "--fleet-gone-after-seconds", "3", "--host-cpus", "2"});
  ASSERT_TRUE(parsed.config) << parsed.error->message;
  EXPECT_DOUBLE_EQ(parsed.config->fleet_heartbeat_seconds, 0.5);
  EXPECT_DOUBLE_EQ(parsed.config->fleet_gone_after_seconds, 3);
  EXPECT_EQ(parsed.config->host_cpus, 2);

  auto error = [](std::vector<std::string> args) {
    auto result = Parse(std::move(args));
    return result.error ? result.error->message : std::string("no error");
  };
  EXPECT_EQ(error({"--fleet-heartbeat-seconds", "0"}), "fleet_heartbeat_seconds must be positive");
  EXPECT_EQ(error({"--fleet-gone-after-seconds", "5"}),
            "fleet_gone_after_seconds must exceed fleet_heartbeat_seconds");
  EXPECT_EQ(error({"--host-cpus", "-1"}), "host_cpus must not be negative");
}

TEST(DaemonConfig, DbIsAFileOrAPostgresUrlWithItsPoolLimits) {
  auto parsed = Parse({"--db", "postgresql://tuner@db.internal:5432/tiletune", "--db-connections",
                       "16", "--db-connect-timeout-seconds", "3"});
  ASSERT_TRUE(parsed.config) << parsed.error->message;
  EXPECT_EQ(parsed.config->db_path, "postgresql://tuner@db.internal:5432/tiletune");
  EXPECT_EQ(parsed.config->db_connections, 16);
  EXPECT_EQ(parsed.config->db_connect_timeout_seconds, 3);

  parsed = Parse({"--db", "postgresql://db.internal/tiletune?sslmdoe=require"});
  ASSERT_TRUE(parsed.error);
  EXPECT_NE(parsed.error->message.find(
                "db: not a PostgreSQL URL (invalid URI query parameter: \"sslmdoe\")"),
            std::string::npos)
      << parsed.error->message;
  parsed = Parse({"--db-connections", "0"});
  ASSERT_TRUE(parsed.error);
  EXPECT_EQ(parsed.error->message, "db_connections must be positive");
  parsed = Parse({"--db-busy-timeout-ms", "-1"});
  ASSERT_TRUE(parsed.error);
  EXPECT_EQ(parsed.error->message, "db_busy_timeout_ms must be positive");
}

TEST(DaemonConfig, TlsAndAuthSettingsMustFitTogether) {
  auto error = [](std::vector<std::string> args) {
    auto parsed = Parse(std::move(args));
    return parsed.error ? parsed.error->message : std::string("no error");
  };
  EXPECT_EQ(error({"--tls-cert-file", "c.pem"}),
            "tls_cert_file and tls_key_file must be given together");
  EXPECT_EQ(error({"--tls-client-ca-file", "ca.pem"}),
            "tls_client_ca_file needs TLS: set tls_cert_file and tls_key_file");
  EXPECT_EQ(
      error({"--tls-cert-file", "c.pem", "--tls-key-file", "k.pem", "--tls-require-client-cert"}),
      "tls_require_client_cert needs tls_client_ca_file");
  EXPECT_EQ(error({"--auth-writers", "alice"}),
            "auth_writers needs auth_tokens_file or tls_client_ca_file");
  EXPECT_EQ(error({"--max-queued-jobs-per-client", "0"}),
            "max_queued_jobs_per_client must be positive");

  // A bool setting is a bare flag on the command line.
  auto parsed =
      Parse({"--tls-cert-file", "c.pem", "--tls-key-file", "k.pem", "--tls-client-ca-file",
             "ca.pem", "--tls-require-client-cert", "--auth-open-reads", "false"});
  ASSERT_TRUE(parsed.config) << parsed.error->message;
  EXPECT_TRUE(parsed.config->tls_require_client_cert);
  EXPECT_FALSE(parsed.config->auth_open_reads);
  EXPECT_TRUE(AuthEnabled(*parsed.config));
  EXPECT_FALSE(AuthEnabled(DaemonConfig{}));
}

TEST(DaemonConfig, PrintedConfigReadsBackTheSame) {
  testing::TempDir dir;
  auto parsed = Parse({"--max-dim", "4096", "--devices", "cpu:0"});
  ASSERT_TRUE(parsed.config);
  const auto path = dir.path() / "dump.yaml";
  std::ofstream(path) << ConfigToYaml(*parsed.config);
  DaemonConfig reread;
  ASSERT_FALSE(LoadConfigFile(path.string(), reread));
  EXPECT_EQ(ConfigToYaml(reread), ConfigToYaml(*parsed.config));
}

}  // namespace
}  // namespace tiletune::server
