// tiletuned: owns this node's devices, tunes kernels and serves the winners.
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include <absl/synchronization/mutex.h>
#include <fmt/format.h>
#include <google/protobuf/util/time_util.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "db/tuning_store.h"
#include "runtime/backend_registry.h"
#include "runtime/subprocess.h"
#include "server/artifact_signer.h"
#include "server/call_authorizer.h"
#include "server/daemon_config.h"
#include "server/daemon_metrics.h"
#include "server/database_health.h"
#include "server/device_registry.h"
#include "server/fleet_heartbeat.h"
#include "server/host_cpus.h"
#include "server/job_event_hub.h"
#include "server/job_scheduler.h"
#include "server/log_format.h"
#include "server/lookup_cache.h"
#include "server/metrics_http_server.h"
#include "server/systemd_notify.h"
#include "server/tls_credentials.h"
#include "server/tuning_service.h"
#include "server/web_view.h"

namespace fs = std::filesystem;
using namespace tiletune;

namespace {

constexpr char kServiceName[] = "tiletune.v1.TuningService";
constexpr char kLivenessService[] = "liveness";
// SERVING while calls that change the database (SubmitJob, CancelJob,
// ImportRecords) can work: NOT_SERVING while the database is unreachable or
// refuses writes, when "" and kServiceName stay SERVING for lookups.
constexpr char kMutationsService[] = "tiletune.v1.TuningService.mutations";

// A program installed beside tiletuned.
std::string Sibling(const char* name) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return (ec ? fs::path(".") : self.parent_path()) / name;
}

// Whether `address` (host:port, as `listen` takes it) cannot be bound
// because another socket holds it: gRPC only says that no port was added,
// and this is the cause worth naming. Binds as gRPC does (SO_REUSEADDR, so
// connections in TIME_WAIT do not count).
// Whether a process accepts connections on the Unix socket at `path`: a
// running daemon's, not a stale file a killed one left behind.
bool UnixSocketInUse(const std::string& path) {
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) return false;
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const bool answered =
      connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return answered;
}

bool AddressInUse(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) return false;
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), address.c_str() + colon + 1, &hints,
                  &found) != 0) {
    return false;
  }
  bool in_use = false;
  for (const addrinfo* a = found; a && !in_use; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    in_use = bind(fd, a->ai_addr, a->ai_addrlen) != 0 && errno == EADDRINUSE;
    close(fd);
  }
  freeaddrinfo(found);
  return in_use;
}

void AddScrapedMetrics(server::MetricsRegistry& registry, db::TuningStore& store,
                       server::DatabaseHealth& database, const server::DeviceRegistry& devices) {
  // Scrapes go on while the database is away: the job counts are left out
  // then, and tiletune_database_reachable says why. Otherwise every state is
  // there, 0 when no job is in it.
  registry.AddReader(server::kJobsMetric, [&store, &database] {
    std::vector<std::pair<server::Labels, double>> out;
    database.Attempt([&] {
      const auto counts = store.CountJobsByState();
      for (int s = v1::JobState_MIN + 1; s <= v1::JobState_MAX; ++s) {
        const auto state = static_cast<v1::JobState>(s);
        const auto it = counts.find(state);
        out.push_back({{{"state", server::EnumLabel(v1::JobState_Name(state), "JOB_")}},
                       it == counts.end() ? 0.0 : static_cast<double>(it->second)});
      }
    });
    return out;
  });
  registry.AddReader(server::kDatabaseReachableMetric, [&database] {
    return std::vector<std::pair<server::Labels, double>>{{{}, database.reachable() ? 1.0 : 0.0}};
  });
  registry.AddReader(server::kDatabaseWritableMetric, [&database] {
    return std::vector<std::pair<server::Labels, double>>{{{}, database.writable() ? 1.0 : 0.0}};
  });
  // One series per device, read from its state at scrape time.
  auto per_device = [&registry, &devices](const server::MetricFamily& family,
                                          double (*value)(const server::ManagedDevice&)) {
    registry.AddReader(family, [&devices, value] {
      std::vector<std::pair<server::Labels, double>> out;
      for (const auto& d : devices.devices()) out.push_back({{{"device", d->info.id}}, value(*d)});
      return out;
    });
  };
  per_device(server::kDeviceBusyMetric,
             [](const auto& d) { return d.state.load() == v1::Device::STATE_BUSY ? 1.0 : 0.0; });
  per_device(server::kDeviceQuarantinedMetric, [](const auto& d) {
    return d.state.load() == v1::Device::STATE_QUARANTINED ? 1.0 : 0.0;
  });
  // A device's worker lives as long as the daemon, so its count only grows.
  per_device(server::kWorkerRestartsMetric,
             [](const auto& d) { return static_cast<double>(d.worker_restarts.load()); });
}

int Run(server::DaemonConfig config) {
  if (config.worker_binary.empty()) config.worker_binary = Sibling("tiletune-worker");
  if (config.rtc_binary.empty()) config.rtc_binary = Sibling("tiletune-rtc");
  // Logs are messages, not data: they go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("tiletuned"));
  spdlog::set_level(spdlog::level::from_str(config.log_level));
  spdlog::set_formatter(server::MakeLogFormatter(config.log_format));

  // Signals go to one waiting thread; every thread started later inherits
  // the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Compilers and workers must not outlive the daemon, also after kill -9.
  try {
    runtime::KillChildGroupsOnExit();
  } catch (const std::system_error& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }

  // Before any thread starts, so that every one and every child inherits it.
  if (config.host_cpus > 0) {
    if (auto error = server::KeepFirstCpus(config.host_cpus)) {
      spdlog::critical("{}", *error);
      return 2;
    }
  }
  if (config.daemon_id.empty()) config.daemon_id = db::HostName();

  std::error_code ec;
  fs::create_directories(config.data_dir, ec);
  if (ec) {
    spdlog::critical("data_dir {}: {}", config.data_dir, ec.message());
    return 1;
  }

  runtime::BackendOptions backend_options;
  backend_options.enabled = config.backends;
  backend_options.cache_dir = (fs::path(config.data_dir) / "cache").string();
  backend_options.cache_max_bytes = config.compile_cache_max_bytes;
  backend_options.host_compiler = config.host_compiler;
  backend_options.host_openblas = config.host_openblas_baseline;
  backend_options.rtc_binary = config.rtc_binary;
  auto discovered = runtime::DiscoverBackends(backend_options);
  for (const auto& s : discovered.statuses) {
    spdlog::info("backend {}: {}{}", s.name, s.available ? "available" : "absent",
                 s.reason.empty() ? "" : " (" + s.reason + ")");
  }
  std::unique_ptr<server::DeviceRegistry> devices;
  try {
    // A shared database is a fleet: jobs queue per device class.
    devices = std::make_unique<server::DeviceRegistry>(std::move(discovered), config.devices,
                                                       db::IsPostgresUrl(config.db_path)
                                                           ? server::JobQueues::kPerDeviceClass
                                                           : server::JobQueues::kPerDevice);
  } catch (const std::invalid_argument& e) {
    spdlog::critical("{}", e.what());
    return 2;
  }
  for (const auto& d : devices->devices()) {
    spdlog::info("device {}: {} {} ({} units), class {}", d->info.id, d->info.fingerprint.vendor(),
                 d->info.fingerprint.name(), d->info.fingerprint.compute_units(),
                 d->info.fingerprint.device_class());
  }

  std::unique_ptr<server::CallAuthorizer> authorizer;
  std::shared_ptr<grpc::ServerCredentials> credentials;
  std::optional<server::ArtifactSigner> signer;
  try {
    authorizer = std::make_unique<server::CallAuthorizer>(config);
    credentials = server::MakeServerCredentials(config);
    signer = server::ArtifactSigner::LoadOrCreate(config.artifact_key_file);
  } catch (const std::runtime_error& e) {
    spdlog::critical("{}", e.what());
    return 2;
  }
  spdlog::info("served kernels are signed with ed25519 key {} ({})", signer->public_key_hex(),
               config.artifact_key_file);
  const bool tls = !config.tls_cert_file.empty();
  spdlog::info(
      "gRPC transport: {}{}; auth: {}", tls ? "TLS" : "plaintext",
      config.tls_client_ca_file.empty()
          ? ""
          : (config.tls_require_client_cert ? ", client certificate required"
                                            : ", client certificate verified if sent"),
      authorizer->enabled()
          ? fmt::format("{} token(s), mutating calls need a credential{}",
                        authorizer->token_count(), config.auth_open_reads ? "" : ", reads too")
          : "off (every call is open)");
  if (!tls && authorizer->token_count() > 0) {
    spdlog::warn("bearer tokens travel in plaintext: set tls_cert_file and tls_key_file");
  }

  server::MetricsRegistry registry;
  server::DaemonMetrics metrics(registry);
  server::LookupCache cache(config.lookup_cache_entries);
  server::JobEventHub events;
  // Set once the gRPC server is built; the database is opened after that.
  grpc::HealthCheckServiceInterface* health = nullptr;
  std::atomic<bool> serving{false};
  server::DatabaseHealth database([&health, &serving](bool usable) {
    health->SetServingStatus(kMutationsService, serving.load() && usable);
  });
  server::ServiceContext context{config, *devices, cache, events, metrics, database};
  context.started_at = google::protobuf::util::TimeUtil::GetCurrentTime();
  context.authorizer = authorizer.get();
  context.signer = &*signer;
  server::TuningServiceImpl service(context);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.listen, credentials, &port);
  if (!config.listen_unix.empty()) {
    // Node-local: who may connect is the socket's file mode, set below. A
    // socket file is removed only when no one answers on it (a killed
    // daemon's): a second daemon must not take a running one's socket.
    if (UnixSocketInUse(config.listen_unix)) {
      spdlog::critical(
          "listen_unix: {} is in use (another tiletuned?); stop it or choose another "
          "path",
          config.listen_unix);
      return 1;
    }
    fs::remove(config.listen_unix, ec);
    builder.AddListeningPort("unix:" + config.listen_unix, grpc::InsecureServerCredentials());
  }
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(config.max_message_bytes);
  builder.SetMaxSendMessageSize(config.max_message_bytes);
  // gRPC shares ports by default: a second daemon would bind beside the
  // first and take part of its connections.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, config.listen_reuse_port ? 1 : 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, config.keepalive_time_ms);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, config.keepalive_timeout_ms);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             config.keepalive_time_ms / 2);
  std::unique_ptr<grpc::Server> grpc_server = builder.BuildAndStart();
  if (!grpc_server || port == 0) {
    if (AddressInUse(config.listen)) {
      spdlog::critical(
          "listen: {} is in use (another tiletuned?); stop it, choose another address, or set "
          "listen_reuse_port on both to share the port",
          config.listen);
    } else {
      spdlog::critical("listen: cannot listen on {}", config.listen);
    }
    return 1;
  }
  if (!config.listen_unix.empty() &&
      ::chmod(config.listen_unix.c_str(),
              static_cast<mode_t>(std::stoi(config.unix_socket_mode, nullptr, 8))) != 0) {
    spdlog::critical("listen_unix: cannot set mode {} on {}", config.unix_socket_mode,
                     config.listen_unix);
    return 1;
  }
  health = grpc_server->GetHealthCheckService();
  // By name: the overload without one would switch "liveness" too.
  auto set_serving = [health, &serving, &database](bool now) {
    serving.store(now);
    health->SetServingStatus("", now);
    health->SetServingStatus(kServiceName, now);
    database.Report();
  };
  set_serving(false);
  // Liveness for orchestrators: SERVING from here to exit, so that probing
  // it never restarts a daemon that is starting or draining.
  health->SetServingStatus(kLivenessService, true);
  const std::string grpc_address =
      config.listen.substr(0, config.listen.rfind(':')) + ":" + std::to_string(port);
  spdlog::info("gRPC listening on {} (NOT_SERVING until the database is open)", grpc_address);

  std::unique_ptr<db::TuningStore> store;
  // A database that is down now may be up soon (it and the daemons start in
  // any order): try again, waiting longer each time, until a signal.
  for (double wait = 1;; wait = std::min(2 * wait, config.db_retry_max_seconds)) {
    try {
      store = db::OpenStore({config.db_path, config.db_read_connections, config.db_busy_timeout_ms,
                             config.db_connections, config.db_connect_timeout_seconds,
                             config.daemon_id, config.db_lease_seconds});
      for (const auto& d : devices->devices()) {
        store->UpsertDevice(d->info.fingerprint, d->info.toolchain);
      }
      if (const int requeued = store->RequeueInterrupted(); requeued > 0) {
        spdlog::info("resuming {} interrupted job item(s)", requeued);
      }
      break;
    } catch (const db::StoreUnreachable& e) {
      store.reset();
      spdlog::error("{}; trying again in {:.0f} s", e.what(), wait);
      const timespec timeout{static_cast<time_t>(wait),
                             static_cast<long>((wait - static_cast<time_t>(wait)) * 1e9)};
      if (const int signal = sigtimedwait(&signals, nullptr, &timeout); signal > 0) {
        spdlog::info("{} before the database could be opened: stopped", strsignal(signal));
        grpc_server->Shutdown();
        return 0;
      }
    } catch (const db::StoreError& e) {
      // The error names the database (a URL without its password).
      spdlog::critical("{}", e.what());
      grpc_server->Shutdown();
      return 1;
    }
  }
  database.Reachable();
  store->ReportWrites(
      [&database](const db::StoreUnwritable* refused) { database.WriteOutcome(refused); });
  // Other daemons on a shared database write records too: drop what the
  // cache holds for them as their commits are announced (for any class:
  // lookups may name a class only other daemons of the fleet have).
  auto record_watch =
      store->WatchRecordChanges([&cache](const std::string& device_class, const std::string& key) {
        if (device_class.empty() || key.empty()) {
          cache.Clear();
        } else {
          cache.Erase(device_class, key);
        }
      });
  context.store = store.get();
  AddScrapedMetrics(registry, *store, database, *devices);
  v1::FleetDaemon self;
  self.set_daemon_id(config.daemon_id);
  self.set_address(grpc_address);
  self.set_version(TILETUNE_VERSION);
  *self.mutable_started_at() = context.started_at;
  std::optional<server::FleetHeartbeat> heartbeat;
  heartbeat.emplace(*store, *devices, database, std::move(self), config.fleet_heartbeat_seconds,
                    config.db_write_retry_seconds);

  server::JobScheduler scheduler(*store, *devices, events, cache, metrics, context.misses, database,
                                 config);
  context.scheduler = &scheduler;
  scheduler.Start();

  server::MetricsHttpServer metrics_http([&registry] { return registry.Render(); },
                                         [&context] { return !context.draining.load(); });
  grpc::ChannelArguments web_channel;
  web_channel.SetMaxReceiveMessageSize(config.max_message_bytes);
  const server::WebView web_view(grpc_server->InProcessChannel(web_channel));
  if (config.web_view) web_view.AddRoutes(metrics_http.routes());
  std::string metrics_address;
  if (!config.metrics_listen.empty()) {
    try {
      metrics_address = metrics_http.Start(config.metrics_listen);
      spdlog::info("metrics on http://{}/metrics{}", metrics_address,
                   config.web_view ? ", web view on http://" + metrics_address + "/" : "");
    } catch (const std::exception& e) {
      spdlog::critical("{}", e.what());
      scheduler.Drain(std::chrono::steady_clock::now());
      grpc_server->Shutdown();
      return 1;
    }
  }

  context.ready.store(true);
  set_serving(true);
  if (!config.ready_file.empty()) {
    const std::string tmp = config.ready_file + ".tmp";
    std::ofstream(tmp) << "grpc=" << grpc_address << "\nmetrics=" << metrics_address
                       << "\nunix=" << config.listen_unix
                       << "\nsigning_key=" << signer->public_key_hex() << "\n";
    fs::rename(tmp, config.ready_file, ec);
  }
  spdlog::info("tiletuned {} serving: db {}, {} device(s)", TILETUNE_VERSION,
               db::DescribeDb(config.db_path), devices->devices().size());
  const server::SystemdNotifier systemd;
  if (!systemd.Notify("READY=1\nSTATUS=serving on " + grpc_address)) {
    spdlog::warn("NOTIFY_SOCKET is set but systemd could not be told READY=1");
  }
  // The watchdog is fed only while the daemon serves; a wedged main thread
  // does not stop it, but a dead or frozen process does.
  std::jthread watchdog;
  if (systemd.watchdog_interval_us() > 0) {
    watchdog = std::jthread([&systemd, &context](std::stop_token stop) {
      std::mutex mu;
      std::condition_variable_any wake;
      std::unique_lock lock(mu);
      const std::chrono::microseconds interval(systemd.watchdog_interval_us());
      while (!stop.stop_requested()) {
        wake.wait_for(lock, stop, interval, [] { return false; });
        if (!stop.stop_requested() && context.ready.load()) systemd.Notify("WATCHDOG=1");
      }
    });
  }

  int received = 0;
  sigwait(&signals, &received);
  spdlog::info("{}: draining (up to {} s for running items)", strsignal(received),
               config.drain_timeout_seconds);
  systemd.Notify("STOPPING=1");
  context.draining.store(true);
  set_serving(false);
  scheduler.Drain(std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(
                                                         config.drain_timeout_seconds * 1000)));
  spdlog::debug("scheduler drained");
  events.CloseAll();
  grpc_server->Shutdown(
      std::chrono::system_clock::now() +
      std::chrono::milliseconds(static_cast<int64_t>(config.shutdown_grace_seconds * 1000)));
  spdlog::debug("gRPC server shut down");
  metrics_http.Stop();
  spdlog::debug("metrics server stopped");
  context.ready.store(false);
  watchdog = {};
  heartbeat.reset();
  context.store = nullptr;
  store.reset();
  if (!config.ready_file.empty()) fs::remove(config.ready_file, ec);
  spdlog::info("stopped cleanly");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Debian's abseil is built without NDEBUG, so every absl::Mutex that gRPC
  // takes also records lock order under one process-wide lock (deadlock
  // detection, a debugging aid): several percent of a lookup's CPU on each
  // side, and a point where gRPC's threads serialize.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  auto parsed = server::ParseDaemonConfig(argc, argv);
  if (parsed.exit_code) return *parsed.exit_code;
  if (parsed.error) {
    std::cerr << "tiletuned: " << parsed.error->message << "\n";
    return 2;
  }
  if (parsed.print_config) {
    std::cout << server::ConfigToYaml(*parsed.config);
    return 0;
  }
  return Run(std::move(*parsed.config));
}
