#include "server/metrics_registry.h"

#include <cmath>
#include <sstream>

namespace tiletune::server {
namespace {

std::string Escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string LabelText(const Labels& labels, const std::string& extra = {}) {
  if (labels.empty() && extra.empty()) return "";
  std::string s = "{";
  for (const auto& [k, v] : labels) {
    if (s.size() > 1) s += ",";
    s += k + "=\"" + Escape(v) + "\"";
  }
  if (!extra.empty()) s += (s.size() > 1 ? "," : "") + extra;
  return s + "}";
}

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  std::ostringstream out;
  out.precision(12);
  out << v;
  return out.str();
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      buckets_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {}

void Histogram::Observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(static_cast<uint64_t>(std::max(0.0, value) * 1e9),
                       std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::CumulativeCounts() const {
  std::vector<uint64_t> out(bounds_.size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    out[i] = total;
  }
  return out;
}

double Histogram::sum() const {
  return static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) * 1e-9;
}

Counter& MetricsRegistry::AddCounter(const std::string& name, const std::string& help,
                                     const Labels& labels) {
  std::lock_guard lock(mu_);
  Family& f = families_[name];
  f.help = help;
  f.type = "counter";
  f.counters.emplace_back(labels, std::make_unique<Counter>());
  return *f.counters.back().second;
}

Histogram& MetricsRegistry::AddHistogram(const std::string& name, const std::string& help,
                                         std::vector<double> bounds) {
  std::lock_guard lock(mu_);
  Family& f = families_[name];
  f.help = help;
  f.type = "histogram";
  f.histogram = std::make_unique<Histogram>(std::move(bounds));
  return *f.histogram;
}

void MetricsRegistry::AddGauge(const std::string& name, const std::string& help,
                               GaugeReader reader) {
  std::lock_guard lock(mu_);
  Family& f = families_[name];
  f.help = help;
  f.type = "gauge";
  f.gauge = std::move(reader);
}

std::string MetricsRegistry::Render() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + f.type + "\n";
    for (const auto& [labels, counter] : f.counters) {
      out += name + LabelText(labels) + " " + std::to_string(counter->value()) + "\n";
    }
    if (f.histogram) {
      const auto counts = f.histogram->CumulativeCounts();
      const auto& bounds = f.histogram->bounds();
      for (size_t i = 0; i <= bounds.size(); ++i) {
        const double le = i < bounds.size() ? bounds[i] : INFINITY;
        out += name + "_bucket" + LabelText({}, "le=\"" + Number(le) + "\"") + " " +
               std::to_string(counts[i]) + "\n";
      }
      out += name + "_sum " + Number(f.histogram->sum()) + "\n";
      out += name + "_count " + std::to_string(f.histogram->count()) + "\n";
    }
    if (f.gauge) {
      for (const auto& [labels, value] : f.gauge()) {
        out += name + LabelText(labels) + " " + Number(value) + "\n";
      }
    }
  }
  return out;
}

}  // namespace tiletune::server
