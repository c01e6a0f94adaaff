#include "server/metrics_registry.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tiletune::server {
namespace {

constexpr MetricFamily kThings{"t_total", MetricType::kCounter, "things"};
constexpr MetricFamily kLatency{"t_seconds", MetricType::kHistogram, "latency"};
constexpr MetricFamily kLevel{"t_gauge", MetricType::kGauge, "g"};
constexpr MetricFamily kRestarts{"t_restarts_total", MetricType::kCounter, "kept elsewhere"};

TEST(MetricsRegistry, RendersPrometheusText) {
  MetricsRegistry r;
  r.AddCounter(kThings, {{"kind", "a\"b"}}).Increment(3);
  auto& h = r.AddHistogram(kLatency, {0.001, 0.01});
  h.Observe(0.0005);
  h.Observe(0.005);
  h.Observe(1);
  r.AddReader(kLevel, [] { return std::vector<std::pair<Labels, double>>{{{}, 4.5}}; });
  const std::string text = r.Render();
  EXPECT_NE(text.find("# TYPE t_total counter\nt_total{kind=\"a\\\"b\"} 3\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("t_seconds_bucket{le=\"0.001\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("t_seconds_bucket{le=\"0.01\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("t_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("t_seconds_count 3\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE t_gauge gauge\nt_gauge 4.5\n"), std::string::npos);
}

TEST(MetricsRegistry, HistogramsCarryTheirLabelsOnEverySeries) {
  MetricsRegistry r;
  r.AddHistogram(kLatency, {0.001}, {{"method", "Lookup"}}).Observe(0.0005);
  r.AddHistogram(kLatency, {0.001}, {{"method", "GetJob"}}).Observe(2);
  const std::string text = r.Render();
  EXPECT_EQ(text.find("# TYPE t_seconds histogram"), text.rfind("# TYPE t_seconds histogram"));
  EXPECT_NE(text.find("t_seconds_bucket{method=\"Lookup\",le=\"0.001\"} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("t_seconds_bucket{method=\"GetJob\",le=\"0.001\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("t_seconds_sum{method=\"GetJob\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("t_seconds_count{method=\"Lookup\"} 1\n"), std::string::npos);
}

TEST(MetricsRegistry, ACounterMayBeReadAtScrapeTime) {
  MetricsRegistry r;
  int restarts = 2;
  r.AddReader(kRestarts, [&restarts] {
    return std::vector<std::pair<Labels, double>>{
        {{{"device", "cpu:0"}}, static_cast<double>(restarts)}};
  });
  restarts = 5;
  EXPECT_NE(
      r.Render().find("# TYPE t_restarts_total counter\nt_restarts_total{device=\"cpu:0\"} 5\n"),
      std::string::npos)
      << r.Render();
}

TEST(MetricsRegistry, RefusesAFamilyAddedAsAnotherType) {
  MetricsRegistry r;
  EXPECT_THROW(r.AddCounter(kLevel), std::logic_error);
  EXPECT_THROW(r.AddHistogram(kThings, {1}), std::logic_error);
  EXPECT_THROW(r.AddReader(kLatency, {}), std::logic_error);
}

}  // namespace
}  // namespace tiletune::server
