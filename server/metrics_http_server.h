#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace tiletune::server {

// Serves GET /metrics (Prometheus text) and GET /healthz on its own thread.
class MetricsHttpServer {
 public:
  using TextSource = std::function<std::string()>;
  MetricsHttpServer(TextSource metrics, std::function<bool()> healthy);
  ~MetricsHttpServer();

  // Binds "host:port" (port 0 picks one) and starts serving; returns the
  // bound address or throws std::runtime_error.
  std::string Start(const std::string& address);
  void Stop();

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace tiletune::server
