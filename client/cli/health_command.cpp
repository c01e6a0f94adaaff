#include <iostream>
#include <memory>

#include "client/cli/commands.h"
#include "client/cli/json_output.h"

namespace tiletune::cli {
namespace {

using grpc::health::v1::HealthCheckResponse;

ExitCode Health(CliContext& context, const std::string& service) {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  HealthCheckResponse response;
  context.Check(context.health().Check(context.CallContext().get(), request, &response));
  if (context.json()) {
    PrintJson(response);
  } else {
    std::cout << HealthCheckResponse::ServingStatus_Name(response.status()) << '\n';
  }
  return response.status() == HealthCheckResponse::SERVING ? kOk : kServerError;
}

}  // namespace

void AddHealthCommand(CLI::App& app, CommandRun& run) {
  auto* command = app.add_subcommand(
      "health", "Ask the daemon's gRPC health service; exits 0 only when SERVING");
  auto service = std::make_shared<std::string>();
  command->add_option("--service", *service,
                      "health service name: empty (the daemon as a whole, NOT_SERVING while "
                      "starting or draining), liveness (SERVING until exit) or "
                      "tiletune.v1.TuningService.mutations (also NOT_SERVING while the tuning "
                      "database is unreachable)");
  command->callback(
      [service, &run] { run = [service](CliContext& c) { return Health(c, *service); }; });
}

}  // namespace tiletune::cli
