#include <iostream>

#include "client/cli/commands.h"
#include "client/cli/json_output.h"

namespace tiletune::cli {
namespace {

using grpc::health::v1::HealthCheckResponse;

ExitCode Health(CliContext& context) {
  grpc::health::v1::HealthCheckRequest request;  // service "": the daemon as a whole
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
  command->callback([&run] { run = Health; });
}

}  // namespace tiletune::cli
