#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "client/channel.h"
#include "client/launcher/kernel_handle.h"
#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::launcher {

struct LauncherOptions {
  // Hex ed25519 public keys of the daemons whose kernels may be loaded (a
  // daemon logs its key and writes it to its ready file as signing_key=).
  // None: no kernel is loaded, every key runs its fallback.
  std::vector<std::string> trusted_keys;
  // Where fetched code is kept by content hash, so that the daemon is asked
  // only whether it changed (the Python client's layout); empty: nowhere.
  std::filesystem::path cache_dir;
  // The longest Resolve waits for the daemon: past it the fallback answers
  // and the fetch goes on in the background.
  std::chrono::milliseconds resolve_deadline{50};
  // How long one fetch may take (the daemon may have to compile the kernel).
  std::chrono::milliseconds fetch_timeout = std::chrono::minutes(2);
  // A key answered by a fallback is asked again after this long: it may be
  // tuned by then, or the daemon back.
  std::chrono::milliseconds retry_after = std::chrono::seconds(30);
  // Load host shared objects, which runs the daemon's code in this process.
  bool allow_host_code = false;
  // Fetch kernels over plaintext TCP from another host. Off: such an
  // address is refused, since anyone on the path could serve code; use TLS
  // (channel.tls_ca_file) or a node-local unix: socket.
  bool allow_plaintext_remote = false;
  int fetch_threads = 2;  // fetches in flight at once
  client::ChannelOptions channel;
};

// Turns tiletuned's answers into launches, for inference servers: fetches
// the kernel a key is served (GetKernel), loads it only when its code
// matches its content hash and its signature verifies under a trusted key,
// and otherwise hands out the fallback: cuBLASLt for GEMM keys on CUDA,
// else kNotHandled for the caller to run its own. Never throws for the
// daemon's sake: down, slow or refusing, the answer is a fallback with the
// reason. Thread-safe.
class KernelLauncher {
 public:
  // `address`: host:port or unix:/path. Throws std::invalid_argument for a
  // trusted key that is not an ed25519 public key in hex, or for plaintext
  // TCP to another host without allow_plaintext_remote.
  explicit KernelLauncher(const std::string& address, LauncherOptions options = {});
  // Cancels fetches in flight. Handles handed out stay usable.
  ~KernelLauncher();
  KernelLauncher(const KernelLauncher&) = delete;
  KernelLauncher& operator=(const KernelLauncher&) = delete;

  // The handle for `key` on `device`, whose id ("cuda:0", "cpu:0") also
  // picks the fallback. Waits at most resolve_deadline for the daemon, then
  // answers the fallback while the fetch continues; a later call returns the
  // tuned kernel once it is loaded. A tuned CUBIN is loaded into the calling
  // thread's current context when it has one, else where it is launched.
  std::shared_ptr<const KernelHandle> Resolve(const v1::KernelKey& key,
                                              const v1::DeviceSelector& device);

  // Starts fetching the keys in the background (at model load), so that
  // Resolve finds them loaded. Returns at once.
  void Prefetch(const std::vector<v1::KernelKey>& keys, const v1::DeviceSelector& device);

 private:
  class Impl;
  const std::unique_ptr<Impl> impl_;
};

}  // namespace tiletune::launcher
