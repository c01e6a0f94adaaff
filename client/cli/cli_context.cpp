#include "client/cli/cli_context.h"

#include <unistd.h>

#include <chrono>

#include "client/channel.h"
#include "client/cli/rpc_error.h"
#include "client/cli/text_table.h"

namespace tiletune::cli {
namespace {

client::ChannelOptions ChannelOptionsFor(const GlobalOptions& options) {
  client::ChannelOptions channel;
  channel.tls = options.tls;
  channel.tls_ca_file = options.tls_ca_file;
  channel.tls_cert_file = options.tls_cert_file;
  channel.tls_key_file = options.tls_key_file;
  if (!options.token_file.empty()) channel.token = client::ReadTokenFile(options.token_file);
  return channel;
}

}  // namespace

CliContext::CliContext(GlobalOptions options)
    : options_(std::move(options)),
      channel_(client::MakeChannel(options_.server, ChannelOptionsFor(options_))),
      tuning_(v1::TuningService::NewStub(channel_)),
      health_(grpc::health::v1::Health::NewStub(channel_)) {}

std::optional<size_t> CliContext::table_width() const {
  return options_.wide ? std::nullopt : OutputColumns(STDOUT_FILENO);
}

std::unique_ptr<grpc::ClientContext> CliContext::CallContext() const {
  auto context = std::make_unique<grpc::ClientContext>();
  auto timeout = std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::duration<double>(options_.timeout_seconds));
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

void CliContext::Check(const grpc::Status& status) const {
  if (!status.ok()) throw ErrorFromStatus(status, options_.server, options_.timeout_seconds);
}

}  // namespace tiletune::cli
