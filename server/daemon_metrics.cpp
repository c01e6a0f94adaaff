#include "server/daemon_metrics.h"

#include <algorithm>
#include <cctype>

#include <grpcpp/support/status_code_enum.h>

#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::server {
namespace {

// grpc::StatusCode's names, indexed by code, as label values.
constexpr std::array<std::string_view, RpcMetrics::kStatusCodes> kStatusCodeLabels = {
    "ok",        "cancelled",      "unknown",           "invalid_argument",   "deadline_exceeded",
    "not_found", "already_exists", "permission_denied", "resource_exhausted", "failed_precondition",
    "aborted",   "out_of_range",   "unimplemented",     "internal",           "unavailable",
    "data_loss", "unauthenticated"};

// From a sub-millisecond Lookup answered from the cache to jobs calls and
// streams of seconds or more.
constexpr std::array<double, 21> kRpcBounds = {
    0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1,      0.25,    0.5,    1,       2.5,    5,     10,     30,    60,   300};

}  // namespace

std::string EnumLabel(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) == prefix) name.remove_prefix(prefix.size());
  std::string label(name);
  std::transform(label.begin(), label.end(), label.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return label;
}

void RpcMetrics::Observe(int status_code, double elapsed_seconds) const {
  // A code outside the known ones is what gRPC calls UNKNOWN.
  const int code = status_code >= 0 && status_code < kStatusCodes ? status_code : grpc::UNKNOWN;
  answered[code]->Increment();
  seconds->Observe(elapsed_seconds);
}

DaemonMetrics::DaemonMetrics(MetricsRegistry& r)
    : registry(r),
      lookups_hit(r.AddCounter(kLookupsMetric, {{"result", "hit"}})),
      lookups_miss(r.AddCounter(kLookupsMetric, {{"result", "miss"}})),
      lookups_invalid(r.AddCounter(kLookupsMetric, {{"result", "invalid"}})),
      lookup_seconds(r.AddHistogram(
          kLookupDurationMetric,
          {0.00001, 0.00002, 0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05})),
      jobs_submitted(r.AddCounter(kJobsSubmittedMetric)),
      records_imported(r.AddCounter(kRecordsImportedMetric)),
      compile_cache_hits(r.AddCounter(kCompilesMetric, {{"cache", "hit"}})),
      compile_cache_misses(r.AddCounter(kCompilesMetric, {{"cache", "miss"}})) {
  for (const auto state : {v1::JOB_SUCCEEDED, v1::JOB_FAILED}) {
    jobs_finished[state] = &r.AddCounter(kJobsFinishedMetric,
                                         {{"state", EnumLabel(v1::JobState_Name(state), "JOB_")}});
  }
  for (int s = v1::TRIAL_OK; s <= v1::TrialStatus_MAX; ++s) {
    const auto status = static_cast<v1::TrialStatus>(s);
    trials[status] = &r.AddCounter(kTrialsMetric,
                                   {{"status", EnumLabel(v1::TrialStatus_Name(status), "TRIAL_")}});
  }
  r.AddReader(kBuildInfoMetric, [] {
    return std::vector<std::pair<Labels, double>>{
        {{{"version", TILETUNE_VERSION}, {"kernel_library", TILETUNE_KERNEL_LIBRARY_VERSION}},
         1.0}};
  });
  // Every method and code from the start, so that rates and ratios over
  // them exist before the first call of a kind.
  const auto* service = v1::LookupRequest::descriptor()->file()->FindServiceByName("TuningService");
  for (int m = 0; m < service->method_count(); ++m) {
    const std::string& method = service->method(m)->name();
    RpcMetrics& rpc = rpcs_[method];
    for (int code = 0; code < RpcMetrics::kStatusCodes; ++code) {
      rpc.answered[code] =
          &r.AddCounter(kGrpcRequestsMetric,
                        {{"method", method}, {"code", std::string(kStatusCodeLabels[code])}});
    }
    rpc.seconds = &r.AddHistogram(kGrpcDurationMetric, {kRpcBounds.begin(), kRpcBounds.end()},
                                  {{"method", method}});
  }
}

const RpcMetrics* DaemonMetrics::Rpc(std::string_view method) const {
  const auto it = rpcs_.find(method);
  return it == rpcs_.end() ? nullptr : &it->second;
}

}  // namespace tiletune::server
