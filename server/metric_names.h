#pragma once

#include <string_view>

namespace tiletune::server {

// Every metric family tiletuned exposes on /metrics, in one place: the
// registry takes these (it refuses a family added as another type), a test
// checks that /metrics holds exactly kMetricFamilies, and .ci/lint-deploy.py
// reads the names and types from this file to check the Grafana dashboard
// and the alert rules under deploy/. Counters end in _total.
enum class MetricType { kCounter, kGauge, kHistogram };

struct MetricFamily {
  std::string_view name;
  MetricType type;
  std::string_view help;
};

inline constexpr MetricFamily kLookupsMetric{"tiletune_lookups_total", MetricType::kCounter,
                                             "Lookups answered, by result"};
inline constexpr MetricFamily kLookupDurationMetric{"tiletune_lookup_duration_seconds",
                                                    MetricType::kHistogram,
                                                    "Time to answer one Lookup inside the daemon"};
inline constexpr MetricFamily kJobsSubmittedMetric{"tiletune_jobs_submitted_total",
                                                   MetricType::kCounter, "Jobs accepted"};
inline constexpr MetricFamily kJobsFinishedMetric{
    "tiletune_jobs_finished_total", MetricType::kCounter,
    "Jobs this daemon finished, by outcome: each job once in a fleet (cancelled jobs are "
    "CancelJob calls)"};
inline constexpr MetricFamily kRecordsImportedMetric{
    "tiletune_records_imported_total", MetricType::kCounter, "Records written by ImportRecords"};
inline constexpr MetricFamily kCompilesMetric{"tiletune_compiles_total", MetricType::kCounter,
                                              "Variant compiles, by compiled-code cache outcome"};
inline constexpr MetricFamily kTrialsMetric{"tiletune_trials_total", MetricType::kCounter,
                                            "Variants tried, by outcome"};
inline constexpr MetricFamily kJobsMetric{
    "tiletune_jobs", MetricType::kGauge,
    "Jobs by state (in fleet mode the whole shared queue: aggregate with max)"};
inline constexpr MetricFamily kDatabaseReachableMetric{
    "tiletune_database_reachable", MetricType::kGauge,
    "1 while the tuning database answers; 0 while lookups are served from the cache alone and "
    "mutating calls are refused"};
inline constexpr MetricFamily kDatabaseWritableMetric{
    "tiletune_database_writable", MetricType::kGauge,
    "0 from a write the tuning database refused (full disk, I/O error, read-only) until one lands "
    "again; lookups go on meanwhile"};
inline constexpr MetricFamily kDeviceBusyMetric{"tiletune_device_busy", MetricType::kGauge,
                                                "1 while a device runs a job"};
inline constexpr MetricFamily kDeviceQuarantinedMetric{
    "tiletune_device_quarantined", MetricType::kGauge,
    "1 once a device is out of service after repeated worker crashes"};
inline constexpr MetricFamily kWorkerRestartsMetric{
    "tiletune_worker_restarts_total", MetricType::kCounter,
    "Benchmark worker restarts after a hang or crash"};
inline constexpr MetricFamily kBuildInfoMetric{
    "tiletune_build_info", MetricType::kGauge,
    "Always 1; the labels say which tiletuned and kernel library version run"};
inline constexpr MetricFamily kGrpcRequestsMetric{
    "tiletune_grpc_requests_total", MetricType::kCounter,
    "TuningService calls answered, by method and gRPC status code"};
inline constexpr MetricFamily kGrpcDurationMetric{
    "tiletune_grpc_request_duration_seconds", MetricType::kHistogram,
    "Time from a TuningService call's admission to its status (a stream: all of it), by method"};

inline constexpr MetricFamily kMetricFamilies[] = {kLookupsMetric,
                                                   kLookupDurationMetric,
                                                   kJobsSubmittedMetric,
                                                   kJobsFinishedMetric,
                                                   kRecordsImportedMetric,
                                                   kCompilesMetric,
                                                   kTrialsMetric,
                                                   kJobsMetric,
                                                   kDatabaseReachableMetric,
                                                   kDatabaseWritableMetric,
                                                   kDeviceBusyMetric,
                                                   kDeviceQuarantinedMetric,
                                                   kWorkerRestartsMetric,
                                                   kBuildInfoMetric,
                                                   kGrpcRequestsMetric,
                                                   kGrpcDurationMetric};

}  // namespace tiletune::server
