#include "client/launcher/kernel_launcher.h"

#include <arpa/inet.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <grpcpp/client_context.h>

#include "client/launcher/abi_packing.h"
#include "client/launcher/code_disk_cache.h"
#include "client/launcher/cuda_kernels.h"
#include "client/launcher/host_kernel.h"
#include "client/launcher/trusted_keys.h"
#include "tiletune/v1/tiletune.grpc.pb.h"

namespace tiletune::launcher {
namespace {

using Clock = std::chrono::steady_clock;

class NotHandled final : public KernelHandle {
 public:
  explicit NotHandled(std::string reason) : KernelHandle(Runner::kNotHandled, std::move(reason)) {}
  LaunchOutcome Launch(void*, const LaunchArgs&) const override {
    return {Runner::kNotHandled, reason()};
  }
};

// "cuda" of "cuda:0".
std::string BackendOf(const v1::DeviceSelector& device) {
  return device.device().substr(0, device.device().find(':'));
}

// Whether `address` (a gRPC target) is this machine: a Unix socket, or a
// loopback host.
bool IsNodeLocal(std::string address) {
  if (address.starts_with("unix:") || address.starts_with("unix-abstract:")) return true;
  for (const std::string_view scheme : {"dns:///", "ipv4:", "ipv6:"}) {
    if (address.starts_with(scheme)) address.erase(0, scheme.size());
  }
  std::string host = address.substr(0, address.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return ::inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

// What a format's entry takes: the struct by value (GPU) or a pointer (host).
v1::KernelAbi::Passing PassingOf(v1::KernelArtifact::Format format) {
  return format == v1::KernelArtifact::FORMAT_HOST_SHARED_OBJECT ? v1::KernelAbi::PASSING_POINTER
                                                                 : v1::KernelAbi::PASSING_BY_VALUE;
}

// `address`, unless it is plaintext TCP to another host the options do not
// allow: loading a kernel runs its code, so it must come from the daemon.
const std::string& RefusingPlaintextRemote(const std::string& address,
                                           const LauncherOptions& options) {
  if (!options.channel.UsesTls() && !options.allow_plaintext_remote && !IsNodeLocal(address)) {
    throw std::invalid_argument(address +
                                ": plaintext TCP to another host; give the channel a CA "
                                "(tls_ca_file), use a unix: socket, or set allow_plaintext_remote");
  }
  return address;
}

}  // namespace

class KernelLauncher::Impl {
 public:
  Impl(const std::string& address, LauncherOptions options);
  ~Impl();

  std::shared_ptr<const KernelHandle> Resolve(const v1::KernelKey& key,
                                              const v1::DeviceSelector& device);
  void Prefetch(const std::vector<v1::KernelKey>& keys, const v1::DeviceSelector& device);

 private:
  // One key on one device. key and device never change; the rest is
  // guarded by mutex_, but for the vendor call (made once, on first need).
  struct Entry {
    v1::KernelKey key;
    v1::DeviceSelector device;
    std::shared_ptr<const KernelHandle> handle;  // null until the first fetch ends
    Clock::time_point settled_at;
    bool fetching = false;
    std::once_flag vendor_once;
    std::shared_ptr<const CublasLtGemmCall> vendor;
    std::string no_vendor;  // why there is none
  };

  std::shared_ptr<Entry> EntryFor(const v1::KernelKey& key, const v1::DeviceSelector& device);
  // Queues a fetch unless one runs or the answer is tuned or still fresh.
  void FetchIfDue(const std::shared_ptr<Entry>& entry);
  void FetchLoop();
  std::shared_ptr<const KernelHandle> Fetch(Entry& entry);
  // `fallback_algorithm`: the cuBLASLt algorithm of the key's record
  // (FallbackAlgorithmOf), for where the kernel cannot run.
  std::shared_ptr<const KernelHandle> Load(Entry& entry, v1::KernelArtifact artifact,
                                           std::string code,
                                           std::optional<v1::VendorAlgorithm> fallback_algorithm);
  // cuBLASLt for the key, made on first need; null (entry.no_vendor says
  // why) where it cannot run the key.
  const std::shared_ptr<const CublasLtGemmCall>& VendorOf(Entry& entry);
  // What runs instead of a tuned kernel, because of `reason`: cuBLASLt with
  // `algorithm` (the heuristic's first when nullopt) where it can.
  std::shared_ptr<const KernelHandle> Fallback(
      Entry& entry, const std::string& reason,
      const std::optional<v1::VendorAlgorithm>& algorithm = std::nullopt);

  const std::string address_;
  const LauncherOptions options_;
  const TrustedKeys trusted_;
  const CodeDiskCache disk_;
  const std::unique_ptr<v1::TuningService::Stub> stub_;

  std::mutex mutex_;
  std::condition_variable queued_, settled_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;  // by key and device bytes
  std::deque<std::shared_ptr<Entry>> queue_;
  std::set<grpc::ClientContext*> in_flight_;  // cancelled on destruction
  bool stopping_ = false;
  std::vector<std::thread> fetchers_;
};

KernelLauncher::Impl::Impl(const std::string& address, LauncherOptions options)
    : address_(RefusingPlaintextRemote(address, options)),
      options_(std::move(options)),
      trusted_(options_.trusted_keys),
      disk_(options_.cache_dir),
      stub_(v1::TuningService::NewStub(client::MakeChannel(address_, options_.channel))) {
  for (int i = 0; i < std::max(1, options_.fetch_threads); ++i) {
    fetchers_.emplace_back([this] { FetchLoop(); });
  }
}

KernelLauncher::Impl::~Impl() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (grpc::ClientContext* context : in_flight_) context->TryCancel();
  }
  queued_.notify_all();
  for (std::thread& fetcher : fetchers_) fetcher.join();
}

std::shared_ptr<KernelLauncher::Impl::Entry> KernelLauncher::Impl::EntryFor(
    const v1::KernelKey& key, const v1::DeviceSelector& device) {
  std::string id;
  key.SerializeToString(&id);
  id += '\0' + device.SerializeAsString();
  std::shared_ptr<Entry>& entry = entries_[id];
  if (!entry) {
    entry = std::make_shared<Entry>();
    entry->key = key;
    entry->device = device;
  }
  return entry;
}

void KernelLauncher::Impl::FetchIfDue(const std::shared_ptr<Entry>& entry) {
  const bool due = !entry->handle || (entry->handle->runner() != Runner::kTuned &&
                                      Clock::now() - entry->settled_at >= options_.retry_after);
  if (!due || entry->fetching || stopping_) return;
  entry->fetching = true;
  queue_.push_back(entry);
  queued_.notify_one();
}

std::shared_ptr<const KernelHandle> KernelLauncher::Impl::Resolve(
    const v1::KernelKey& key, const v1::DeviceSelector& device) {
  const auto give_up_at = Clock::now() + options_.resolve_deadline;
  std::shared_ptr<Entry> entry;
  std::shared_ptr<const KernelHandle> handle;
  {
    std::unique_lock lock(mutex_);
    entry = EntryFor(key, device);
    FetchIfDue(entry);
    settled_.wait_until(lock, give_up_at, [&] { return entry->handle != nullptr; });
    handle = entry->handle;
  }
  if (!handle) {
    return Fallback(*entry, "tiletuned at " + address_ + " has not answered within " +
                                std::to_string(options_.resolve_deadline.count()) +
                                " ms; the fetch goes on in the background");
  }
  if (const auto* cuda = dynamic_cast<const TunedCudaKernel*>(handle.get())) {
    if (auto why = cuda->LoadIntoCurrentContext()) {
      return Fallback(*entry, "the tuned kernel does not load in this context: " + *why,
                      cuda->fallback_algorithm());
    }
  }
  return handle;
}

void KernelLauncher::Impl::Prefetch(const std::vector<v1::KernelKey>& keys,
                                    const v1::DeviceSelector& device) {
  std::lock_guard lock(mutex_);
  for (const v1::KernelKey& key : keys) FetchIfDue(EntryFor(key, device));
}

void KernelLauncher::Impl::FetchLoop() {
  std::unique_lock lock(mutex_);
  while (true) {
    queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    const std::shared_ptr<Entry> entry = queue_.front();
    queue_.pop_front();
    lock.unlock();
    std::shared_ptr<const KernelHandle> handle;
    try {
      handle = Fetch(*entry);
    } catch (const std::exception& e) {
      handle = Fallback(*entry, std::string("fetching the kernel failed: ") + e.what());
    }
    lock.lock();
    entry->handle = std::move(handle);
    entry->settled_at = Clock::now();
    entry->fetching = false;
    settled_.notify_all();
  }
}

std::shared_ptr<const KernelHandle> KernelLauncher::Impl::Fetch(Entry& entry) {
  v1::GetKernelRequest request;
  *request.mutable_key() = entry.key;
  *request.mutable_device() = entry.device;
  if (auto hash = disk_.CachedHash(entry.key, entry.device.device())) {
    request.set_cached_content_hash(*hash);
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + options_.fetch_timeout);
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return Fallback(entry, "the launcher is shutting down");
    in_flight_.insert(&context);
  }
  v1::GetKernelResponse head, message;
  std::string code;
  // The head (artifact or fallback) comes first, then the code in chunks.
  auto reader = stub_->GetKernel(&context, request);
  for (bool first = true; reader->Read(&message); first = false) {
    code += message.code_chunk();
    if (first) head = std::move(message);
  }
  head.clear_code_chunk();
  const grpc::Status status = reader->Finish();
  {
    std::lock_guard lock(mutex_);
    in_flight_.erase(&context);
  }
  if (!status.ok()) {
    const bool unreachable = status.error_code() == grpc::StatusCode::UNAVAILABLE ||
                             status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
    return Fallback(entry, (unreachable ? "tiletuned unavailable at " + address_
                                        : "tiletuned at " + address_ + " refused the key") +
                               ": " + status.error_message());
  }
  // The record's baseline algorithm, whatever else goes wrong below.
  const std::optional<v1::VendorAlgorithm> algorithm =
      head.has_record() ? FallbackAlgorithmOf(head.record()) : std::nullopt;
  if (!head.has_artifact()) {
    return Fallback(entry,
                    "tiletuned serves no tuned kernel (" + head.fallback().library() +
                        "): " + head.fallback().reason(),
                    algorithm);
  }
  v1::KernelArtifact& artifact = *head.mutable_artifact();
  if (head.unchanged()) {
    auto cached = disk_.Code(artifact.content_hash());
    if (!cached) {
      return Fallback(
          entry,
          "tiletuned found the cached code unchanged, but it is gone from " + disk_.dir().string(),
          algorithm);
    }
    code = std::move(*cached);
  }
  if (auto why = trusted_.Refusal(artifact, code)) {
    if (!head.unchanged()) {
      return Fallback(entry, "refused the served kernel: " + *why, algorithm);
    }
    disk_.Forget(artifact.content_hash());  // the next fetch replaces it
    return Fallback(entry, "refused the kernel cached in " + disk_.dir().string() + ": " + *why,
                    algorithm);
  }
  if (!head.unchanged())
    disk_.Store(entry.key, entry.device.device(), artifact.content_hash(), code);
  return Load(entry, std::move(artifact), std::move(code), algorithm);
}

std::shared_ptr<const KernelHandle> KernelLauncher::Impl::Load(
    Entry& entry, v1::KernelArtifact artifact, std::string code,
    std::optional<v1::VendorAlgorithm> fallback_algorithm) {
  auto why = UnsupportedAbi(artifact.abi());
  if (!why && artifact.abi().passing() != PassingOf(artifact.format())) {
    why = "its entry takes the struct by " + v1::KernelAbi::Passing_Name(artifact.abi().passing()) +
          ", not as its format's entries do";
  }
  if (why) return Fallback(entry, "the served kernel's launch ABI: " + *why, fallback_algorithm);
  const std::string reason =
      "tuned kernel " + artifact.kernel_name() + " (code " + artifact.content_hash() + ")";
  const v1::LaunchGeometry& launch = artifact.launch();
  if (artifact.format() != v1::KernelArtifact::FORMAT_CUBIN &&
      (!launch.tensor_maps().empty() || launch.argument_bytes() != 0)) {
    return Fallback(entry,
                    "the served kernel's launch geometry has tensor maps, which only CUBINs take");
  }
  switch (artifact.format()) {
    case v1::KernelArtifact::FORMAT_CUBIN: {
      if (auto bad = UnlaunchableGeometry(launch)) {
        return Fallback(entry, "the served kernel's launch geometry: " + *bad, fallback_algorithm);
      }
      auto maps = runtime::cuda::PlanTensorMaps(launch.tensor_maps(), launch.argument_bytes(),
                                                artifact.abi());
      if (const auto* bad = std::get_if<std::string>(&maps)) {
        return Fallback(entry, "the served kernel's tensor maps: " + *bad);
      }
      std::string missing;
      auto cuda = CudaContexts::Process(&missing);
      if (!cuda) {
        return Fallback(entry, "a CUBIN was served, but CUDA is not usable: " + missing,
                        fallback_algorithm);
      }
      return std::make_shared<TunedCudaKernel>(
          std::move(cuda), std::move(artifact), std::move(code), reason, VendorOf(entry),
          std::move(std::get<std::vector<runtime::cuda::PlannedTensorMap>>(maps)),
          std::move(fallback_algorithm));
    }
    case v1::KernelArtifact::FORMAT_HOST_SHARED_OBJECT: {
      if (!options_.allow_host_code) {
        return Fallback(entry,
                        "a host shared object was served, and allow_host_code is off (loading it "
                        "runs the daemon's code in this process)");
      }
      auto loaded = TunedHostKernel::Load(std::move(artifact), code, reason);
      if (auto* error = std::get_if<std::string>(&loaded)) {
        return Fallback(entry, "the host kernel does not load: " + *error);
      }
      return std::get<std::shared_ptr<const KernelHandle>>(loaded);
    }
    case v1::KernelArtifact::FORMAT_HSACO:
      return Fallback(entry, "an HSACO was served; this launcher does not load HIP code yet");
    default:
      return Fallback(
          entry, "a kernel of unknown format " + std::to_string(artifact.format()) + " was served");
  }
}

const std::shared_ptr<const CublasLtGemmCall>& KernelLauncher::Impl::VendorOf(Entry& entry) {
  std::call_once(entry.vendor_once, [&] {
    if (BackendOf(entry.device) != "cuda") {
      entry.no_vendor =
          "this launcher runs cuBLASLt for gemm keys on cuda devices only, and the "
          "device is '" +
          entry.device.device() + "'";
      return;
    }
    std::string missing;
    auto cuda = CudaContexts::Process(&missing);
    if (!cuda) {
      entry.no_vendor = "CUDA is not usable: " + missing;
      return;
    }
    auto call = CublasLtGemmCall::For(std::move(cuda), entry.key);
    if (auto* why = std::get_if<std::string>(&call)) {
      entry.no_vendor = std::move(*why);
    } else {
      entry.vendor = std::get<std::shared_ptr<const CublasLtGemmCall>>(std::move(call));
    }
  });
  return entry.vendor;
}

std::shared_ptr<const KernelHandle> KernelLauncher::Impl::Fallback(
    Entry& entry, const std::string& reason, const std::optional<v1::VendorAlgorithm>& algorithm) {
  if (const auto& vendor = VendorOf(entry)) {
    return std::make_shared<CublasLtHandle>(vendor, algorithm, reason);
  }
  return std::make_shared<NotHandled>(reason + " (no fallback here: " + entry.no_vendor + ")");
}

KernelLauncher::KernelLauncher(const std::string& address, LauncherOptions options)
    : impl_(std::make_unique<Impl>(address, std::move(options))) {}

KernelLauncher::~KernelLauncher() = default;

std::shared_ptr<const KernelHandle> KernelLauncher::Resolve(const v1::KernelKey& key,
                                                            const v1::DeviceSelector& device) {
  return impl_->Resolve(key, device);
}

void KernelLauncher::Prefetch(const std::vector<v1::KernelKey>& keys,
                              const v1::DeviceSelector& device) {
  impl_->Prefetch(keys, device);
}

}  // namespace tiletune::launcher
