#include "server/metrics_registry.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

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

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
  }
  return "untyped";
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

MetricsRegistry::Family& MetricsRegistry::FamilyOf(const MetricFamily& family, bool type_matches) {
  if (!type_matches) {
    throw std::logic_error("metric " + std::string(family.name) + " is declared a " +
                           TypeName(family.type) + " in metric_names.h");
  }
  auto [it, added] = families_.try_emplace(std::string(family.name));
  if (added) {
    it->second.help = family.help;
    it->second.type = family.type;
  }
  return it->second;
}

Counter& MetricsRegistry::AddCounter(const MetricFamily& family, const Labels& labels) {
  std::lock_guard lock(mu_);
  Family& f = FamilyOf(family, family.type == MetricType::kCounter);
  f.counters.emplace_back(labels, std::make_unique<Counter>());
  return *f.counters.back().second;
}

Histogram& MetricsRegistry::AddHistogram(const MetricFamily& family, std::vector<double> bounds,
                                         const Labels& labels) {
  std::lock_guard lock(mu_);
  Family& f = FamilyOf(family, family.type == MetricType::kHistogram);
  f.histograms.emplace_back(labels, std::make_unique<Histogram>(std::move(bounds)));
  return *f.histograms.back().second;
}

void MetricsRegistry::AddReader(const MetricFamily& family, SeriesReader reader) {
  std::lock_guard lock(mu_);
  Family& f = FamilyOf(family, family.type != MetricType::kHistogram);
  if (f.reader) throw std::logic_error("metric " + std::string(family.name) + " has a reader");
  f.reader = std::move(reader);
}

std::string MetricsRegistry::Render() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + TypeName(f.type) + "\n";
    for (const auto& [labels, counter] : f.counters) {
      out += name + LabelText(labels) + " " + std::to_string(counter->value()) + "\n";
    }
    for (const auto& [labels, histogram] : f.histograms) {
      const auto counts = histogram->CumulativeCounts();
      const auto& bounds = histogram->bounds();
      for (size_t i = 0; i <= bounds.size(); ++i) {
        const double le = i < bounds.size() ? bounds[i] : INFINITY;
        out += name + "_bucket" + LabelText(labels, "le=\"" + Number(le) + "\"") + " " +
               std::to_string(counts[i]) + "\n";
      }
      out += name + "_sum" + LabelText(labels) + " " + Number(histogram->sum()) + "\n";
      out += name + "_count" + LabelText(labels) + " " + std::to_string(histogram->count()) + "\n";
    }
    if (f.reader) {
      for (const auto& [labels, value] : f.reader()) {
        out += name + LabelText(labels) + " " + Number(value) + "\n";
      }
    }
  }
  return out;
}

}  // namespace tiletune::server
