#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/metric_names.h"

namespace tiletune::server {

using Labels = std::map<std::string, std::string>;

class Counter {
 public:
  void Increment(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// Cumulative histogram with fixed upper bounds, lock-free on the hot path.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  const std::vector<double>& bounds() const { return bounds_; }
  // Cumulative counts per bound, then +Inf.
  std::vector<uint64_t> CumulativeCounts() const;
  double sum() const;
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_nanos_{0};  // sum in units of 1e-9, so it stays atomic
};

// Metrics in the Prometheus text exposition format, of the families in
// metric_names.h. Counters and histograms are created once and updated
// lock-free; series read at scrape time (jobs by state, device states, a
// device's worker restarts) come from readers.
class MetricsRegistry {
 public:
  // Each throws std::logic_error when `family` is of another type, so a
  // family's type in metric_names.h is the one it is rendered as.
  Counter& AddCounter(const MetricFamily& family, const Labels& labels = {});
  Histogram& AddHistogram(const MetricFamily& family, std::vector<double> bounds,
                          const Labels& labels = {});
  using SeriesReader = std::function<std::vector<std::pair<Labels, double>>()>;
  // A gauge, or a counter whose value another part keeps; one per family.
  void AddReader(const MetricFamily& family, SeriesReader reader);

  std::string Render() const;

 private:
  struct Family {
    std::string help;
    MetricType type = MetricType::kGauge;
    std::vector<std::pair<Labels, std::unique_ptr<Counter>>> counters;
    std::vector<std::pair<Labels, std::unique_ptr<Histogram>>> histograms;
    SeriesReader reader;
  };
  Family& FamilyOf(const MetricFamily& family, bool type_matches);

  mutable std::mutex mu_;
  std::map<std::string, Family, std::less<>> families_;
};

}  // namespace tiletune::server
