#include "server/daemon_config.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <functional>
#include <map>
#include <sstream>
#include <utility>
#include <variant>

#include <yaml-cpp/yaml.h>

#include "db/tuning_store.h"

namespace tiletune::server {
namespace {

using FieldPtr = std::variant<std::string*, int*, int64_t*, double*, bool*,
                              std::vector<std::string>*, runtime::SchedPolicy*>;

// tuning_sched_policy's values, as sched(7) names them.
constexpr std::pair<runtime::SchedPolicy, const char*> kSchedPolicyNames[] = {
    {runtime::SchedPolicy::kOther, "other"},
    {runtime::SchedPolicy::kBatch, "batch"},
    {runtime::SchedPolicy::kIdle, "idle"}};

// One setting: its YAML key (flag --key with '-' for '_'), help text and the
// field it sets. A single table serves the file, the flags and the dump.
struct Setting {
  const char* key;
  const char* help;
  std::function<FieldPtr(DaemonConfig&)> field;
};

const std::vector<Setting>& Settings() {
  static const std::vector<Setting> kSettings = {
      {"listen", "gRPC listen address", [](auto& c) { return &c.listen; }},
      {"listen_reuse_port",
       "let the listen port be shared with other daemons that allow it (SO_REUSEPORT); off, a "
       "port in use stops the daemon at start",
       [](auto& c) { return &c.listen_reuse_port; }},
      {"metrics_listen", "Prometheus /metrics address (empty: off)",
       [](auto& c) { return &c.metrics_listen; }},
      {"web_view", "serve the read-only web view at / on the metrics_listen port",
       [](auto& c) { return &c.web_view; }},
      {"listen_unix", "also serve on this Unix-domain socket path (node-local clients)",
       [](auto& c) { return &c.listen_unix; }},
      {"unix_socket_mode", "file mode (octal) of the listen_unix socket",
       [](auto& c) { return &c.unix_socket_mode; }},
      {"artifact_key_file",
       "ed25519 key that signs served kernels, created if absent (default "
       "<data_dir>/artifact-signing.key)",
       [](auto& c) { return &c.artifact_key_file; }},
      {"data_dir", "folder for the database and compiled-code cache",
       [](auto& c) { return &c.data_dir; }},
      {"db", "SQLite database file, or postgresql:// URL (default <data_dir>/tiletune.db)",
       [](auto& c) { return &c.db_path; }},
      {"backends", "backends to open, in order (host,cuda,hip)",
       [](auto& c) { return &c.backends; }},
      {"devices", "device ids to use (default: all found)", [](auto& c) { return &c.devices; }},
      {"log_level", "trace, debug, info, warn, error", [](auto& c) { return &c.log_level; }},
      {"log_format", "text, or json (one object a line: time, level, message, fields)",
       [](auto& c) { return &c.log_format; }},
      {"worker_binary", "benchmark worker program (default: beside tiletuned)",
       [](auto& c) { return &c.worker_binary; }},
      {"rtc_binary", "device compile program, tiletune-rtc (default: beside tiletuned)",
       [](auto& c) { return &c.rtc_binary; }},
      {"host_compiler", "system compiler of the host backend",
       [](auto& c) { return &c.host_compiler; }},
      {"host_openblas_baseline",
       "time host GEMMs against OpenBLAS where the compiler finds it (false: against host-naive, "
       "our straightforward kernel)",
       [](auto& c) { return &c.host_openblas_baseline; }},
      {"ready_file", "file to write the bound addresses to once serving",
       [](auto& c) { return &c.ready_file; }},
      {"compile_threads", "variants compiled in parallel",
       [](auto& c) { return &c.compile_threads; }},
      {"db_read_connections", "SQLite read connections",
       [](auto& c) { return &c.db_read_connections; }},
      {"db_busy_timeout_ms", "SQLite: how long a write waits for another process's lock",
       [](auto& c) { return &c.db_busy_timeout_ms; }},
      {"db_connections", "PostgreSQL: pooled connections",
       [](auto& c) { return &c.db_connections; }},
      {"db_connect_timeout_seconds", "PostgreSQL: time limit of one connection attempt",
       [](auto& c) { return &c.db_connect_timeout_seconds; }},
      {"db_retry_max_seconds",
       "longest wait between attempts to reach a database that is down at start",
       [](auto& c) { return &c.db_retry_max_seconds; }},
      {"db_write_retry_seconds",
       "while the database refuses writes (full disk), how often they are tried again",
       [](auto& c) { return &c.db_write_retry_seconds; }},
      {"db_lease_seconds", "PostgreSQL: a claimed job item's lease, renewed while it runs",
       [](auto& c) { return &c.db_lease_seconds; }},
      {"daemon_id", "PostgreSQL: this daemon's unique, stable name (default: host name)",
       [](auto& c) { return &c.daemon_id; }},
      {"fleet_heartbeat_seconds", "how often this daemon announces itself and its devices",
       [](auto& c) { return &c.fleet_heartbeat_seconds; }},
      {"fleet_gone_after_seconds", "a daemon silent this long is shown as gone",
       [](auto& c) { return &c.fleet_gone_after_seconds; }},
      {"host_cpus",
       "CPUs the daemon and its host workers use, the first N allowed (0: all); part of the "
       "host device class",
       [](auto& c) { return &c.host_cpus; }},
      {"compile_cache_max_bytes", "compiled-code cache size bound",
       [](auto& c) { return &c.compile_cache_max_bytes; }},
      {"max_dim", "largest dimension of a kernel key",
       [](auto& c) { return &c.key_limits.max_dim; }},
      {"max_elements", "elements of the largest tensor a key describes",
       [](auto& c) { return &c.key_limits.max_elements; }},
      {"max_chain_length", "most element-wise ops (prologue + chain) in one kernel",
       [](auto& c) { return &c.key_limits.max_chain_length; }},
      {"max_graph_ops", "most ops in an op graph key",
       [](auto& c) { return &c.key_limits.max_graph_ops; }},
      {"max_graph_tensors", "most declared tensors in an op graph key",
       [](auto& c) { return &c.key_limits.max_graph_tensors; }},
      {"max_name_bytes",
       "longest name a request may carry (job, op, dim, tensor names; request ids)",
       [](auto& c) { return &c.key_limits.max_name_bytes; }},
      {"max_message_bytes", "largest gRPC message, either way",
       [](auto& c) { return &c.max_message_bytes; }},
      {"max_text_bytes",
       "longest other free text a request may bring in (imported records' text fields)",
       [](auto& c) { return &c.max_text_bytes; }},
      {"max_batch_lookup", "most lookups in one BatchLookup",
       [](auto& c) { return &c.max_batch_lookup; }},
      {"max_artifact_bytes", "largest compiled kernel GetKernel serves",
       [](auto& c) { return &c.max_artifact_bytes; }},
      {"artifact_chunk_bytes", "code bytes per GetKernel message",
       [](auto& c) { return &c.artifact_chunk_bytes; }},
      {"max_kernels_per_job", "most kernel keys in one job (verify jobs of an import too)",
       [](auto& c) { return &c.max_kernels_per_job; }},
      {"max_queued_jobs", "most jobs queued or running at once",
       [](auto& c) { return &c.max_queued_jobs; }},
      {"max_queued_jobs_per_client", "most jobs one client may have queued or running",
       [](auto& c) { return &c.max_queued_jobs_per_client; }},
      {"max_page_size",
       "largest page of ListRecords/ListJobs/ListTrials (and of the web view's JSON)",
       [](auto& c) { return &c.max_page_size; }},
      {"max_request_seconds",
       "longest BatchLookup/ListJobs/ListRecords may run, whatever the client's deadline",
       [](auto& c) { return &c.max_request_seconds; }},
      {"max_stream_seconds",
       "longest WatchJob/ExportRecords may stream, whatever the client's deadline",
       [](auto& c) { return &c.max_stream_seconds; }},
      {"lookup_cache_entries", "entries of the in-memory lookup cache",
       [](auto& c) { return &c.lookup_cache_entries; }},
      {"tune_on_miss_priority", "priority of jobs queued by tune_on_miss",
       [](auto& c) { return &c.tune_on_miss_priority; }},
      {"max_queued_tune_on_miss", "most jobs queued by lookups (tune-on-miss, stale re-tune)",
       [](auto& c) { return &c.max_queued_tune_on_miss; }},
      {"max_missed_keys", "keys whose lookup misses are counted in memory",
       [](auto& c) { return &c.max_missed_keys; }},
      {"miss_count_flush_seconds", "how often lookup miss counts are saved to the job queue",
       [](auto& c) { return &c.miss_count_flush_seconds; }},
      {"quarantine_after_crashes", "worker crashes in a row that quarantine a device",
       [](auto& c) { return &c.quarantine_after_crashes; }},
      {"keepalive_time_ms", "gRPC keepalive ping interval",
       [](auto& c) { return &c.keepalive_time_ms; }},
      {"keepalive_timeout_ms", "gRPC keepalive ping timeout",
       [](auto& c) { return &c.keepalive_timeout_ms; }},
      {"drain_timeout_seconds", "on SIGTERM, how long a running item may finish",
       [](auto& c) { return &c.drain_timeout_seconds; }},
      {"shutdown_grace_seconds", "after draining, how long in-flight RPCs may finish",
       [](auto& c) { return &c.shutdown_grace_seconds; }},
      {"tls_cert_file", "PEM server certificate (chain); with tls_key_file turns TLS on",
       [](auto& c) { return &c.tls_cert_file; }},
      {"tls_key_file", "PEM private key of tls_cert_file", [](auto& c) { return &c.tls_key_file; }},
      {"tls_client_ca_file", "PEM CA that signs client certificates (mutual TLS)",
       [](auto& c) { return &c.tls_client_ca_file; }},
      {"tls_require_client_cert", "refuse TLS clients without a certificate from the client CA",
       [](auto& c) { return &c.tls_require_client_cert; }},
      {"auth_tokens_file", "file of 'NAME TOKEN' lines accepted as bearer tokens",
       [](auto& c) { return &c.auth_tokens_file; }},
      {"auth_writers", "identities allowed SubmitJob/CancelJob/ImportRecords (empty: any)",
       [](auto& c) { return &c.auth_writers; }},
      {"auth_open_reads", "with auth on, lookups and other reads need no credential",
       [](auto& c) { return &c.auth_open_reads; }},
      {"default_max_variants", "variants per kernel when a job names no budget",
       [](auto& c) { return &c.tuning.default_max_variants; }},
      {"default_max_seconds", "seconds per kernel when a job names no budget",
       [](auto& c) { return &c.tuning.default_max_seconds; }},
      {"max_variants_cap", "most variants any job may ask for per kernel",
       [](auto& c) { return &c.tuning.max_variants_cap; }},
      {"max_seconds_cap", "most seconds any job may ask for per kernel",
       [](auto& c) { return &c.tuning.max_seconds_cap; }},
      {"compile_timeout_seconds", "a compile past this is killed",
       [](auto& c) { return &c.tuning.compile_timeout_seconds; }},
      {"compile_niceness",
       "compilers run this much nicer than the daemon (0-19), so lookups stay fast",
       [](auto& c) { return &c.tuning.compile_niceness; }},
      {"tuning_sched_policy",
       "scheduling policy of the compilers and benchmark workers of tuning jobs: other, batch, "
       "or idle (they run only on CPU time the daemon's threads, lookups first, leave)",
       [](auto& c) { return &c.tuning.sched_policy; }},
      {"run_limit_factor", "a variant may run this many times the baseline's time",
       [](auto& c) { return &c.tuning.run_limit_factor; }},
      {"run_limit_min_seconds", "floor of a variant's run limit",
       [](auto& c) { return &c.tuning.run_limit_min_seconds; }},
      {"run_limit_max_seconds", "ceiling of a variant's run limit",
       [](auto& c) { return &c.tuning.run_limit_max_seconds; }},
      {"tolerance_f32", "max relative error of f32 kernels",
       [](auto& c) { return &c.tuning.tolerance_f32; }},
      {"tolerance_tf32", "max relative error of f32 gemm kernels whose key allows tf32",
       [](auto& c) { return &c.tuning.tolerance_tf32; }},
      {"tolerance_half", "max relative error of f16/bf16 kernels",
       [](auto& c) { return &c.tuning.tolerance_half; }},
      {"min_speedup", "a tuned kernel is served only above this speedup",
       [](auto& c) { return &c.tuning.min_speedup; }},
      {"serve_over_vendor_gap",
       "serve a tuned kernel even where its baseline does not stand for what users run "
       "(attention on GPUs, GEMM on AMD); off, such keys stay VENDOR",
       [](auto& c) { return &c.tuning.serve_over_vendor_gap; }},
      {"baseline_algorithms",
       "a vendor baseline (cuBLASLt) times this many of its heuristic's algorithms and keeps the "
       "fastest correct one (1-256)",
       [](auto& c) { return &c.tuning.baseline_algorithms; }},
      {"reject_spills", "reject variants whose compile report shows register spills",
       [](auto& c) { return &c.tuning.reject_spills; }},
      {"warmup_runs", "untimed runs before timing", [](auto& c) { return &c.tuning.warmup_runs; }},
      {"min_repetitions", "timed runs at least", [](auto& c) { return &c.tuning.min_repetitions; }},
      {"max_repetitions", "timed runs at most", [](auto& c) { return &c.tuning.max_repetitions; }},
      {"min_timing_seconds", "time spent timing at least",
       [](auto& c) { return &c.tuning.min_timing_seconds; }},
      {"max_throttle_retries", "times a measurement taken while throttled is repeated",
       [](auto& c) { return &c.tuning.max_throttle_retries; }},
      {"decision_rounds", "interleaved re-timing rounds of winner, runner-up and baseline",
       [](auto& c) { return &c.tuning.decision_rounds; }},
      {"noise_factor", "the winner must beat the baseline by this many times the noise",
       [](auto& c) { return &c.tuning.noise_factor; }},
      {"reference_full_max_flops",
       "above this estimate of the float64 reference's operations, outputs are compared on "
       "sampled rows only (every element is still checked to be written and finite)",
       [](auto& c) { return &c.tuning.reference_full_max_flops; }},
      {"reference_sample_rows",
       "random rows of a sampled reference (first, last and partial-tile rows come on top)",
       [](auto& c) { return &c.tuning.reference_sample_rows; }},
      {"reference_threads", "threads the worker computes the reference on (0: every core)",
       [](auto& c) { return &c.tuning.reference_threads; }},
      {"plant_faults", "TESTING ONLY: add a hanging, a crashing and a wrong variant to every item",
       [](auto& c) { return &c.tuning.plant_faults; }},
  };
  return kSettings;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

template <typename T>
bool ParseNumber(const std::string& text, T& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

// Sets a field from text; false when the text does not fit its type.
bool SetFromText(FieldPtr field, const std::string& text) {
  return std::visit(
      [&](auto* p) -> bool {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, std::string>) {
          *p = text;
          return true;
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          *p = SplitList(text);
          return true;
        } else if constexpr (std::is_same_v<T, bool>) {
          if (text == "true" || text == "1") return (*p = true), true;
          if (text == "false" || text == "0") return (*p = false), true;
          return false;
        } else if constexpr (std::is_same_v<T, runtime::SchedPolicy>) {
          for (const auto& [policy, name] : kSchedPolicyNames) {
            if (text == name) return (*p = policy), true;
          }
          return false;
        } else {
          return ParseNumber(text, *p);
        }
      },
      field);
}

std::string ToText(FieldPtr field) {
  return std::visit(
      [](auto* p) -> std::string {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return *p;
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          std::string s;
          for (const auto& v : *p) s += (s.empty() ? "" : ",") + v;
          return s;
        } else if constexpr (std::is_same_v<T, bool>) {
          return *p ? "true" : "false";
        } else if constexpr (std::is_same_v<T, runtime::SchedPolicy>) {
          for (const auto& [policy, name] : kSchedPolicyNames) {
            if (*p == policy) return name;
          }
          return "?";
        } else {
          std::ostringstream out;
          out << *p;
          return out.str();
        }
      },
      field);
}

std::string FlagName(const char* key) {
  std::string name = key;
  std::replace(name.begin(), name.end(), '_', '-');
  return "--" + name;
}

}  // namespace

std::optional<ConfigError> LoadConfigFile(const std::string& path, DaemonConfig& config) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return ConfigError{"config file " + path + ": cannot be read"};
  } catch (const YAML::Exception& e) {
    return ConfigError{"config file " + path + ": " + e.what()};
  }
  if (root.IsNull()) return std::nullopt;
  if (!root.IsMap()) return ConfigError{"config file " + path + ": expected a mapping of settings"};
  for (const auto& entry : root) {
    const auto key = entry.first.as<std::string>();
    auto it = std::find_if(Settings().begin(), Settings().end(),
                           [&](const Setting& s) { return key == s.key; });
    if (it == Settings().end()) {
      return ConfigError{"config file " + path + ": unknown setting '" + key + "' (line " +
                         std::to_string(entry.first.Mark().line + 1) + ")"};
    }
    std::string text;
    if (entry.second.IsSequence()) {
      for (const auto& v : entry.second) text += (text.empty() ? "" : ",") + v.as<std::string>();
    } else if (entry.second.IsScalar()) {
      text = entry.second.as<std::string>();
    }
    if (!SetFromText(it->field(config), text)) {
      return ConfigError{"config file " + path + ": " + key + ": '" + text +
                         "' is not a valid value (line " +
                         std::to_string(entry.second.Mark().line + 1) + ")"};
    }
  }
  return std::nullopt;
}

bool AuthEnabled(const DaemonConfig& config) {
  return !config.auth_tokens_file.empty() || !config.tls_client_ca_file.empty();
}

std::optional<ConfigError> ValidateConfig(const DaemonConfig& c) {
  auto positive = [](const char* key, double v) -> std::optional<ConfigError> {
    if (v > 0) return std::nullopt;
    return ConfigError{std::string(key) + " must be positive"};
  };
  const std::pair<const char*, double> checks[] = {
      {"compile_threads", c.compile_threads},
      {"db_read_connections", c.db_read_connections},
      {"db_busy_timeout_ms", c.db_busy_timeout_ms},
      {"db_connections", c.db_connections},
      {"db_connect_timeout_seconds", c.db_connect_timeout_seconds},
      {"db_retry_max_seconds", c.db_retry_max_seconds},
      {"db_write_retry_seconds", c.db_write_retry_seconds},
      {"db_lease_seconds", c.db_lease_seconds},
      {"fleet_heartbeat_seconds", c.fleet_heartbeat_seconds},
      {"fleet_gone_after_seconds", c.fleet_gone_after_seconds},
      {"compile_cache_max_bytes", static_cast<double>(c.compile_cache_max_bytes)},
      {"max_dim", static_cast<double>(c.key_limits.max_dim)},
      {"max_elements", static_cast<double>(c.key_limits.max_elements)},
      {"max_chain_length", c.key_limits.max_chain_length},
      {"max_graph_ops", c.key_limits.max_graph_ops},
      {"max_graph_tensors", c.key_limits.max_graph_tensors},
      {"max_name_bytes", c.key_limits.max_name_bytes},
      {"max_message_bytes", c.max_message_bytes},
      {"max_text_bytes", c.max_text_bytes},
      {"max_batch_lookup", c.max_batch_lookup},
      {"max_artifact_bytes", static_cast<double>(c.max_artifact_bytes)},
      {"artifact_chunk_bytes", c.artifact_chunk_bytes},
      {"max_kernels_per_job", c.max_kernels_per_job},
      {"max_queued_jobs", c.max_queued_jobs},
      {"max_queued_jobs_per_client", c.max_queued_jobs_per_client},
      {"max_page_size", c.max_page_size},
      {"max_request_seconds", c.max_request_seconds},
      {"max_stream_seconds", c.max_stream_seconds},
      {"lookup_cache_entries", c.lookup_cache_entries},
      {"quarantine_after_crashes", c.quarantine_after_crashes},
      {"keepalive_time_ms", c.keepalive_time_ms},
      {"keepalive_timeout_ms", c.keepalive_timeout_ms},
      {"drain_timeout_seconds", c.drain_timeout_seconds},
      {"shutdown_grace_seconds", c.shutdown_grace_seconds},
      {"default_max_variants", c.tuning.default_max_variants},
      {"default_max_seconds", c.tuning.default_max_seconds},
      {"max_variants_cap", c.tuning.max_variants_cap},
      {"max_seconds_cap", c.tuning.max_seconds_cap},
      {"compile_timeout_seconds", c.tuning.compile_timeout_seconds},
      {"run_limit_factor", c.tuning.run_limit_factor},
      {"run_limit_min_seconds", c.tuning.run_limit_min_seconds},
      {"run_limit_max_seconds", c.tuning.run_limit_max_seconds},
      {"tolerance_f32", c.tuning.tolerance_f32},
      {"tolerance_tf32", c.tuning.tolerance_tf32},
      {"tolerance_half", c.tuning.tolerance_half},
      {"min_speedup", c.tuning.min_speedup},
      {"min_repetitions", c.tuning.min_repetitions},
      {"max_repetitions", c.tuning.max_repetitions},
      {"max_queued_tune_on_miss", c.max_queued_tune_on_miss},
      {"max_missed_keys", c.max_missed_keys},
      {"miss_count_flush_seconds", c.miss_count_flush_seconds},
      {"decision_rounds", c.tuning.decision_rounds},
      {"reference_full_max_flops", c.tuning.reference_full_max_flops},
      {"reference_sample_rows", c.tuning.reference_sample_rows},
  };
  for (const auto& [key, value] : checks) {
    if (auto e = positive(key, value)) return e;
  }
  if (c.tuning.warmup_runs < 0) return ConfigError{"warmup_runs must not be negative"};
  if (c.tuning.max_throttle_retries < 0) {
    return ConfigError{"max_throttle_retries must not be negative"};
  }
  if (c.tuning.noise_factor < 0) return ConfigError{"noise_factor must not be negative"};
  if (c.tuning.baseline_algorithms < 1 ||
      c.tuning.baseline_algorithms > tuner::kMaxBaselineAlgorithms) {
    return ConfigError{"baseline_algorithms must be between 1 and " +
                       std::to_string(tuner::kMaxBaselineAlgorithms)};
  }
  if (c.tuning.compile_niceness < 0 || c.tuning.compile_niceness > 19) {
    return ConfigError{"compile_niceness must be between 0 and 19"};
  }
  if (c.host_cpus < 0) return ConfigError{"host_cpus must not be negative"};
  if (c.fleet_gone_after_seconds <= c.fleet_heartbeat_seconds) {
    return ConfigError{"fleet_gone_after_seconds must exceed fleet_heartbeat_seconds"};
  }
  if (c.tuning.reference_threads < 0) {
    return ConfigError{"reference_threads must not be negative"};
  }
  if (!(c.tuning.max_seconds_cap > 0)) return ConfigError{"max_seconds_cap must be positive"};
  if (c.tuning.run_limit_min_seconds > c.tuning.run_limit_max_seconds) {
    return ConfigError{"run_limit_min_seconds must not exceed run_limit_max_seconds"};
  }
  if (c.listen.empty()) return ConfigError{"listen must not be empty"};
  if (db::IsPostgresUrl(c.db_path)) {
    try {
      db::DescribeDb(c.db_path);
    } catch (const db::StoreError& e) {
      return ConfigError{e.what()};
    }
  }
  if (c.unix_socket_mode.empty() ||
      c.unix_socket_mode.find_first_not_of("01234567") != std::string::npos ||
      c.unix_socket_mode.size() > 4) {
    return ConfigError{"unix_socket_mode: '" + c.unix_socket_mode.substr(0, 16) +
                       "' is not an octal file mode such as 0660"};
  }
  if (c.tls_cert_file.empty() != c.tls_key_file.empty()) {
    return ConfigError{"tls_cert_file and tls_key_file must be given together"};
  }
  if (!c.tls_client_ca_file.empty() && c.tls_cert_file.empty()) {
    return ConfigError{"tls_client_ca_file needs TLS: set tls_cert_file and tls_key_file"};
  }
  if (c.tls_require_client_cert && c.tls_client_ca_file.empty()) {
    return ConfigError{"tls_require_client_cert needs tls_client_ca_file"};
  }
  if (!c.auth_writers.empty() && !AuthEnabled(c)) {
    return ConfigError{"auth_writers needs auth_tokens_file or tls_client_ca_file"};
  }
  static const std::vector<std::string> kLevels = {"trace", "debug",    "info", "warn",
                                                   "error", "critical", "off"};
  if (std::find(kLevels.begin(), kLevels.end(), c.log_level) == kLevels.end()) {
    return ConfigError{"log_level must be one of trace, debug, info, warn, error, critical, off"};
  }
  if (c.log_format != "text" && c.log_format != "json") {
    return ConfigError{"log_format must be text or json"};
  }
  return std::nullopt;
}

ParsedConfig ParseDaemonConfig(int argc, char** argv) {
  ParsedConfig result;
  CLI::App app{"tiletuned: the tiletune kernel autotuning daemon"};
  app.set_version_flag("--version", std::string("tiletuned ") + TILETUNE_VERSION);
  std::string config_path;
  app.add_option("--config", config_path, "YAML file of settings (flags override it)");
  app.add_flag("--print-config", result.print_config, "print the effective config and exit");
  std::map<std::string, std::string> given;
  DaemonConfig probe;
  for (const auto& s : Settings()) {
    auto* option = app.add_option(FlagName(s.key), given[s.key], s.help);
    // A bool setting given as a bare flag means true.
    if (std::holds_alternative<bool*>(s.field(probe))) option->expected(0, 1);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // app.exit prints the message; a usage error exits 2 whatever CLI11's
    // own code for it is (109 for an unknown flag).
    result.exit_code = app.exit(e) == 0 ? 0 : 2;
    return result;
  }

  DaemonConfig config;
  if (!config_path.empty()) {
    if (auto e = LoadConfigFile(config_path, config)) {
      result.error = e;
      return result;
    }
  }
  for (const auto& s : Settings()) {
    if (app.count(FlagName(s.key)) == 0) continue;
    const bool bare_flag = given[s.key].empty() && std::holds_alternative<bool*>(s.field(config));
    if (!SetFromText(s.field(config), bare_flag ? "true" : given[s.key])) {
      result.error = ConfigError{FlagName(s.key) + ": '" + given[s.key] + "' is not a valid value"};
      return result;
    }
  }
  if (config.db_path.empty()) config.db_path = config.data_dir + "/tiletune.db";
  if (config.artifact_key_file.empty()) {
    config.artifact_key_file = config.data_dir + "/artifact-signing.key";
  }
  if (auto e = ValidateConfig(config)) {
    result.error = e;
    return result;
  }
  result.config = std::move(config);
  return result;
}

std::string ConfigToYaml(const DaemonConfig& config) {
  DaemonConfig copy = config;
  std::string out;
  for (const auto& s : Settings()) {
    out += std::string(s.key) + ": \"" + ToText(s.field(copy)) + "\"\n";
  }
  return out;
}

}  // namespace tiletune::server
