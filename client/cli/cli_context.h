#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include "grpc/health/v1/health.grpc.pb.h"
#include "tiletune/v1/tiletune.grpc.pb.h"

namespace tiletune::cli {

// The options every command takes.
struct GlobalOptions {
  std::string server = "127.0.0.1:7733";
  bool json = false;
  bool wide = false;
  double timeout_seconds = 10;
  bool tls = false;
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string token_file;
};

// What a command needs to talk to the daemon and to report.
class CliContext {
 public:
  explicit CliContext(GlobalOptions options);

  const GlobalOptions& options() const { return options_; }
  bool json() const { return options_.json; }
  // The width tables on stdout fit (TextTable::Print): nullopt with --wide
  // or when stdout is not a terminal (OutputColumns).
  std::optional<size_t> table_width() const;

  v1::TuningService::Stub& tuning() { return *tuning_; }
  grpc::health::v1::Health::Stub& health() { return *health_; }

  // A call context whose deadline is --timeout from now.
  std::unique_ptr<grpc::ClientContext> CallContext() const;

  // Throws the CommandError for a failed call; returns on OK.
  void Check(const grpc::Status& status) const;

 private:
  GlobalOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TuningService::Stub> tuning_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

}  // namespace tiletune::cli
