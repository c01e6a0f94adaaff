#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace tiletune::server {

// The daemon's HTTP port: serves GET /metrics (Prometheus text), GET
// /healthz and whatever else is added to routes() (the web view) before
// Start, on its own threads.
class MetricsHttpServer {
 public:
  using TextSource = std::function<std::string()>;
  MetricsHttpServer(TextSource metrics, std::function<bool()> healthy);
  ~MetricsHttpServer();

  // Binds "host:port" (port 0 picks one) and starts serving; returns the
  // bound address or throws std::runtime_error.
  std::string Start(const std::string& address);
  void Stop();
  httplib::Server& routes() { return *server_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace tiletune::server
