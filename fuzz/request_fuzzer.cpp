// libFuzzer target over every request of tiletune.v1.TuningService: the
// first byte picks the message, the rest is its wire bytes. Each message
// that parses goes through what the daemon does before it touches the
// database: field validation, device resolution, key canonicalisation,
// import-line parsing, and for valid keys the plan (template, search space,
// a variant's generated source). Any crash, sanitizer report or uncaught
// exception is a finding.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/core/kernel_key.h"
#include "kernels/core/kernel_template.h"
#include "runtime/backend_registry.h"
#include "server/daemon_config.h"
#include "server/device_registry.h"
#include "server/record_import.h"
#include "server/request_validation.h"
#include "tiletune/v1/tiletune.pb.h"

namespace {

using namespace tiletune;

// Variants whose source is generated per valid key: enough to reach the
// generators, few enough to keep thousands of inputs a second.
constexpr uint64_t kVariantsPerKey = 2;

struct Daemon {
  server::DaemonConfig config;
  std::unique_ptr<server::DeviceRegistry> devices;
};

const Daemon& TheDaemon() {
  static const Daemon daemon = [] {
    Daemon d;
    runtime::BackendOptions options;
    options.enabled = {"host"};
    options.cache_dir = "/tmp/tiletune-fuzz-cache";
    d.devices = std::make_unique<server::DeviceRegistry>(runtime::DiscoverBackends(options),
                                                         std::vector<std::string>{},
                                                         server::JobQueues::kPerDevice);
    return d;
  }();
  return daemon;
}

void Plan(const v1::KernelKey& raw) {
  const v1::KernelKey key = kernels::NormalizeKernelKey(raw);
  kernels::CanonicalKeyString(key);
  for (const char* backend : {"host", "cuda", "hip"}) {
    std::string why;
    const auto* kernel = kernels::FindKernelTemplate(key, backend, &why);
    if (!kernel) continue;
    const auto space = kernel->Space(key);
    const uint64_t points = space.product_size();
    for (uint64_t i = 0, made = 0; i < points && made < kVariantsPerKey; ++i) {
      const auto variant = space.At(i);
      if (space.Violation(variant)) continue;
      kernel->Source(key, variant);
      ++made;
    }
    kernel->BaselineFor(key);
  }
}

void CheckLookup(const v1::LookupRequest& request, const std::string& prefix) {
  const auto& d = TheDaemon();
  if (kernels::ValidateKernelKey(request.key(), d.config.key_limits, prefix + "key")) return;
  server::ResolveDevice(request.device(), *d.devices, d.config.key_limits, prefix + "device");
  Plan(request.key());
}

template <typename Message>
bool Parse(Message& message, const uint8_t* data, size_t size) {
  return message.ParseFromArray(data, static_cast<int>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t kind = data[0];
  ++data;
  --size;
  const auto& d = TheDaemon();
  switch (kind % 12) {
    case 0: {
      v1::LookupRequest m;
      if (Parse(m, data, size)) CheckLookup(m, "");
      break;
    }
    case 1: {
      v1::BatchLookupRequest m;
      if (!Parse(m, data, size) || m.requests_size() > d.config.max_batch_lookup) break;
      for (int i = 0; i < m.requests_size(); ++i) {
        CheckLookup(m.requests(i), "requests[" + std::to_string(i) + "].");
      }
      break;
    }
    case 2: {
      v1::SubmitJobRequest m;
      if (!Parse(m, data, size)) break;
      if (server::ValidateJobSpec(m.spec(), d.config, *d.devices, {})) break;
      for (const auto& key : m.spec().kernels()) Plan(key);
      break;
    }
    case 3: {
      v1::ImportRecordsRequest m;
      if (Parse(m, data, size)) server::ParseImportLines(m.jsonl(), d.config);
      break;
    }
    case 4: {
      v1::ListJobsRequest m;
      if (Parse(m, data, size)) server::PageSize(m.page_size(), d.config.max_page_size);
      break;
    }
    case 5: {
      v1::ListRecordsRequest m;
      if (!Parse(m, data, size)) break;
      server::PageSize(m.page_size(), d.config.max_page_size);
      kernels::IsKnownOp(m.op());
      break;
    }
    case 6: {
      v1::ExportRecordsRequest m;
      if (Parse(m, data, size)) kernels::IsKnownOp(m.op());
      break;
    }
    // Requests that carry only ids: parsing is all the daemon does before
    // the database looks the id up.
    case 7: {
      v1::GetJobRequest m;
      Parse(m, data, size);
      break;
    }
    case 8: {
      v1::CancelJobRequest m;
      Parse(m, data, size);
      break;
    }
    case 9: {
      v1::WatchJobRequest m;
      Parse(m, data, size);
      break;
    }
    case 11: {
      v1::ListTrialsRequest m;
      if (!Parse(m, data, size)) break;
      server::PageSize(m.page_size(), d.config.max_page_size);
      server::TrialPageOffset(m.page_token());
      break;
    }
    default: {
      v1::ListDevicesRequest m;
      Parse(m, data, size);
      break;
    }
  }
  return 0;
}
