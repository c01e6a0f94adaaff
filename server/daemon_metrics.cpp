#include "server/daemon_metrics.h"

#include <algorithm>
#include <cctype>

namespace tiletune::server {
namespace {

constexpr char kLookups[] = "tiletune_lookups_total";
constexpr char kLookupsHelp[] = "Lookups answered, by result";
constexpr char kCompiles[] = "tiletune_compiles_total";
constexpr char kCompilesHelp[] = "Variant compiles, by compiled-code cache outcome";

std::string TrialStatusLabel(v1::TrialStatus status) {
  std::string name = v1::TrialStatus_Name(status).substr(std::string("TRIAL_").size());
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return name;
}

}  // namespace

DaemonMetrics::DaemonMetrics(MetricsRegistry& r)
    : registry(r),
      lookups_hit(r.AddCounter(kLookups, kLookupsHelp, {{"result", "hit"}})),
      lookups_miss(r.AddCounter(kLookups, kLookupsHelp, {{"result", "miss"}})),
      lookups_invalid(r.AddCounter(kLookups, kLookupsHelp, {{"result", "invalid"}})),
      lookup_seconds(r.AddHistogram(
          "tiletune_lookup_duration_seconds", "Time to answer one Lookup inside the daemon",
          {0.00001, 0.00002, 0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05})),
      jobs_submitted(r.AddCounter("tiletune_jobs_submitted_total", "Jobs accepted")),
      records_imported(
          r.AddCounter("tiletune_records_imported_total", "Records written by ImportRecords")),
      compile_cache_hits(r.AddCounter(kCompiles, kCompilesHelp, {{"cache", "hit"}})),
      compile_cache_misses(r.AddCounter(kCompiles, kCompilesHelp, {{"cache", "miss"}})) {
  for (int s = v1::TRIAL_OK; s <= v1::TrialStatus_MAX; ++s) {
    const auto status = static_cast<v1::TrialStatus>(s);
    trials[status] = &r.AddCounter("tiletune_trials_total", "Variants tried, by outcome",
                                   {{"status", TrialStatusLabel(status)}});
  }
}

}  // namespace tiletune::server
