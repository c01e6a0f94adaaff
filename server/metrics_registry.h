#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

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

// Metrics in the Prometheus text exposition format. Counters and histograms
// are created once and updated lock-free; gauges are read by callbacks at
// scrape time (jobs by state, device states).
class MetricsRegistry {
 public:
  Counter& AddCounter(const std::string& name, const std::string& help, const Labels& labels = {});
  Histogram& AddHistogram(const std::string& name, const std::string& help,
                          std::vector<double> bounds);
  using GaugeReader = std::function<std::vector<std::pair<Labels, double>>()>;
  void AddGauge(const std::string& name, const std::string& help, GaugeReader reader);

  std::string Render() const;

 private:
  struct Family {
    std::string help;
    std::string type;
    std::vector<std::pair<Labels, std::unique_ptr<Counter>>> counters;
    std::unique_ptr<Histogram> histogram;
    GaugeReader gauge;
  };
  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

}  // namespace tiletune::server
