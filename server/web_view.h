#pragma once

#include <memory>

#include <grpcpp/channel.h>

#include "tiletune/v1/tiletune.grpc.pb.h"

namespace httplib {
class Server;
}

namespace tiletune::server {

// The web view on the daemon's HTTP port, beside /metrics: the page, its
// script and style (web/assets, embedded), and under /api/ the JSON they
// read. Each /api/ request is answered by calling this daemon's own gRPC
// service in process with the request's Authorization header as the call's
// metadata, so that the web view has the API's auth (open or closed reads,
// writers only for cancel), page-size limits and validation, and no second
// home for any of them. Tokens are read from that header only, never from
// the URL.
class WebView {
 public:
  // `channel`: the gRPC server's in-process channel.
  explicit WebView(const std::shared_ptr<grpc::Channel>& channel);

  void AddRoutes(httplib::Server& server) const;

 private:
  std::shared_ptr<v1::TuningService::Stub> stub_;
};

}  // namespace tiletune::server
