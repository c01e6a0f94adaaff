#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/channel.h>

namespace tiletune::client {

// Transport settings for every channel to tiletuned, set explicitly rather
// than left to gRPC's defaults.
struct ChannelOptions {
  // Pings find a dead daemon behind a silent network, also between calls.
  // tiletuned accepts a ping every keepalive_time_ms / 2 (15 s by default); a
  // stock gRPC server would close the connection ("too_many_pings") for
  // pinging more often than every 5 minutes.
  std::chrono::milliseconds keepalive_time = std::chrono::seconds(30);
  std::chrono::milliseconds keepalive_timeout = std::chrono::seconds(10);
  // gRPC's default cap of 120 s would keep a restarted daemon unused (every
  // call answered by fallback) for up to two minutes.
  std::chrono::milliseconds max_reconnect_backoff = std::chrono::seconds(5);
  // Record pages and exports can exceed gRPC's 4 MiB default, and an import
  // sends its whole file in one message.
  int max_receive_message_bytes = 64 << 20;
  int max_send_message_bytes = 64 << 20;

  // TLS, on when `tls` is set or any file below is named. PEM files.
  bool tls = false;
  std::string tls_ca_file;    // CA that signed the daemon's certificate; empty: the system's
  std::string tls_cert_file;  // this client's certificate, for mutual TLS
  std::string tls_key_file;
  // Sent as "authorization: Bearer <token>" with every call; empty: none.
  std::string token;

  bool UsesTls() const;
};

// A channel to `address` (host:port, or any gRPC target), plaintext unless
// the options ask for TLS. Throws InputError naming an unreadable file.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address,
                                           const ChannelOptions& options = {});

// The token in a file (surrounding whitespace dropped). Throws InputError
// naming the file, never showing its contents.
std::string ReadTokenFile(const std::string& path);

}  // namespace tiletune::client
