#include "server/metrics_http_server.h"

#include <httplib.h>

#include <stdexcept>

namespace tiletune::server {

MetricsHttpServer::MetricsHttpServer(TextSource metrics, std::function<bool()> healthy)
    : server_(std::make_unique<httplib::Server>()) {
  server_->Get("/metrics", [metrics](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics(), "text/plain; version=0.0.4");
  });
  server_->Get("/healthz", [healthy](const httplib::Request&, httplib::Response& res) {
    const bool ok = healthy();
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "SERVING\n" : "NOT_SERVING\n", "text/plain");
  });
}

MetricsHttpServer::~MetricsHttpServer() {
  Stop();
}

std::string MetricsHttpServer::Start(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    throw std::runtime_error("metrics_listen: expected host:port, got '" + address + "'");
  }
  const std::string host = address.substr(0, colon);
  const int port = std::stoi(address.substr(colon + 1));
  int bound = -1;
  if (port == 0) {
    bound = server_->bind_to_any_port(host);
  } else if (server_->bind_to_port(host, port)) {
    bound = port;
  }
  if (bound <= 0) throw std::runtime_error("metrics_listen: cannot listen on " + address);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return host + ":" + std::to_string(bound);
}

void MetricsHttpServer::Stop() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

}  // namespace tiletune::server
