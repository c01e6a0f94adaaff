#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/core/kernel_key.h"
#include "tuner/tuning_session.h"

namespace tiletune::server {

// Every setting and limit of tiletuned, with its default. Read from an
// optional YAML file (keys as the field names) and overridden by flags.
struct DaemonConfig {
  std::string listen = "127.0.0.1:7733";
  // Whether `listen` may share its port with other sockets that allow it
  // (SO_REUSEPORT: several daemons, the kernel spreading connections). Off,
  // a port in use is an error at start rather than a second daemon bound
  // beside the first.
  bool listen_reuse_port = false;
  // A node-local Unix-domain socket served beside `listen` (empty: none):
  // clients on this node reach the daemon without TCP, access decided by
  // the socket's file mode (octal) and the caller's auth as on TCP.
  std::string listen_unix;
  std::string unix_socket_mode = "0660";
  // The ed25519 key the daemon signs served kernels with, created on first
  // start. Default: <data_dir>/artifact-signing.key.
  std::string artifact_key_file;
  std::string metrics_listen = "127.0.0.1:9733";  // empty: no metrics endpoint
  // The read-only web view (docs/web-view.md) on the metrics_listen port;
  // off, that port serves /metrics and /healthz only.
  bool web_view = true;
  std::string data_dir = "tiletune-data";  // database, compiled-code cache
  // A SQLite file, or a postgresql:// URL (fleet mode: daemons share one
  // database). Default: <data_dir>/tiletune.db.
  std::string db_path;
  std::vector<std::string> backends = {"host", "cuda", "hip"};
  std::vector<std::string> devices;  // empty: every device found
  std::string log_level = "info";
  // "text", or "json": one JSON object a line, for log collectors
  // (server/log_format.h).
  std::string log_format = "text";
  std::string worker_binary;  // default: tiletune-worker beside tiletuned
  std::string rtc_binary;     // default: tiletune-rtc beside tiletuned
  std::string host_compiler = "c++";
  // Host GEMMs are measured against OpenBLAS where the compiler finds it;
  // false measures them against host-naive, our straightforward kernel.
  bool host_openblas_baseline = true;
  // When set, written once the daemon serves: its bound gRPC and metrics
  // addresses (useful with port 0).
  std::string ready_file;
  int compile_threads = 2;
  int db_read_connections = 4;         // SQLite readers beside the writer
  int db_busy_timeout_ms = 5000;       // SQLite: wait for another process's lock
  int db_connections = 8;              // PostgreSQL: pooled connections
  int db_connect_timeout_seconds = 5;  // PostgreSQL: per connection attempt
  // A database that cannot be reached at start is tried again, the wait
  // doubling from 1 s up to this, until it answers or a signal stops the
  // daemon (orchestrators start the database and the daemons in any order).
  double db_retry_max_seconds = 30;
  // While the database refuses writes (a full disk, an I/O error, read-only):
  // how often the daemon tries again, with its fleet heartbeat (whose landing
  // says it takes writes again) and with the state of a job item or job it
  // could not store.
  double db_write_retry_seconds = 2;
  // PostgreSQL: how long a claimed job item stays this daemon's without a
  // heartbeat (renewed three times per lease), and the name it holds items
  // under; unique per daemon sharing a database, stable across restarts
  // (empty: the host name).
  int db_lease_seconds = 30;
  std::string daemon_id;
  // The fleet view (the daemons table): how often this daemon announces
  // itself, its devices and what they run, and how old a daemon's last
  // heartbeat may be before it is shown as gone and its device classes no
  // longer count as served when a job names one this daemon lacks.
  double fleet_heartbeat_seconds = 5;
  double fleet_gone_after_seconds = 30;
  // CPUs the daemon, its compilers and its host-backend workers run on: the
  // first N of those it may use (0: all of them). The count is the host
  // device's compute units, so it is part of the host device class.
  int host_cpus = 0;
  int64_t compile_cache_max_bytes = int64_t{1} << 30;

  // Request limits. Names (job names, SubmitJob request ids, and those of
  // keys) are bounded by key_limits.max_name_bytes.
  kernels::KeyLimits key_limits;
  int max_message_bytes = 16 << 20;
  // Bytes of any longer free text a request brings in to be kept (the text
  // fields of imported records); list answers cut an entry's text to this
  // when the entry alone would not fit in max_message_bytes.
  int max_text_bytes = 4096;
  int max_batch_lookup = 1024;
  // GetKernel: the largest artifact it serves, and the code bytes per
  // streamed message (well under max_message_bytes).
  int64_t max_artifact_bytes = int64_t{256} << 20;
  int artifact_chunk_bytes = 1 << 20;
  int max_kernels_per_job = 64;
  int max_queued_jobs = 1000;
  // Jobs one client (token name, certificate CN or peer address) may have
  // queued or running; counted from the job queue, so restarts keep it.
  int max_queued_jobs_per_client = 100;
  int max_page_size = 1000;
  // How long a call may run whatever deadline the client set, or none: the
  // unary calls whose work grows with the request (BatchLookup, ListJobs,
  // ListRecords), and the server streams (WatchJob, ExportRecords). A watch
  // cut off here can be started again; the CLI does so by itself.
  double max_request_seconds = 60;
  double max_stream_seconds = 3600;
  int lookup_cache_entries = 100000;
  int tune_on_miss_priority = -10;
  // Jobs the lookup path may have queued at once (per kind: tune-on-miss,
  // stale re-tune); past it a miss answers without queueing.
  int max_queued_tune_on_miss = 100;
  // Keys whose lookup misses are counted in memory, and how often the
  // counts of queued jobs are saved.
  int max_missed_keys = 100000;
  double miss_count_flush_seconds = 1;
  // A device whose worker dies this many times in a row is quarantined: it
  // takes no more work until the daemon restarts.
  int quarantine_after_crashes = 5;

  // Connection and shutdown timing.
  int keepalive_time_ms = 30000;
  int keepalive_timeout_ms = 10000;
  double drain_timeout_seconds = 30;
  // After draining, how long in-flight RPCs may finish before they are
  // cancelled.
  double shutdown_grace_seconds = 1;

  // TLS on the gRPC port: both files or neither (plaintext).
  std::string tls_cert_file;
  std::string tls_key_file;
  // Client certificates signed by this CA are verified and their CN is the
  // caller's identity; with tls_require_client_cert, a client without one
  // cannot connect at all.
  std::string tls_client_ca_file;
  bool tls_require_client_cert = false;
  // Lines "NAME TOKEN": a caller sending "authorization: Bearer TOKEN" is
  // NAME. With tokens or a client CA configured, mutating calls (SubmitJob,
  // CancelJob, ImportRecords) need a credential.
  std::string auth_tokens_file;
  // Identities allowed to mutate; empty: any authenticated caller.
  std::vector<std::string> auth_writers;
  // Whether lookups and the other read calls stay open to callers without a
  // credential (a trusted network) while auth is on.
  bool auth_open_reads = true;

  tuner::TuningLimits tuning;
};

// A config problem, naming the setting.
struct ConfigError {
  std::string message;
};

// Parses flags (and the --config file they name). Returns the config, or an
// error; `exit_code` is set instead when the flags asked only for --help or
// --version output (0), or were malformed (2, the message printed).
struct ParsedConfig {
  std::optional<DaemonConfig> config;
  std::optional<ConfigError> error;
  std::optional<int> exit_code;
  bool print_config = false;
};
ParsedConfig ParseDaemonConfig(int argc, char** argv);

// Reads a YAML config file over `config`; unknown keys are errors.
std::optional<ConfigError> LoadConfigFile(const std::string& path, DaemonConfig& config);

// Whether callers must present a credential for mutating calls.
bool AuthEnabled(const DaemonConfig& config);

// Range checks on every limit.
std::optional<ConfigError> ValidateConfig(const DaemonConfig& config);

// The effective config as YAML (for --print-config and the start-up log).
std::string ConfigToYaml(const DaemonConfig& config);

}  // namespace tiletune::server
