#include "server/metrics_registry.h"

#include <gtest/gtest.h>

namespace tiletune::server {
namespace {

TEST(MetricsRegistry, RendersPrometheusText) {
  MetricsRegistry r;
  r.AddCounter("t_total", "things", {{"kind", "a\"b"}}).Increment(3);
  auto& h = r.AddHistogram("t_seconds", "latency", {0.001, 0.01});
  h.Observe(0.0005);
  h.Observe(0.005);
  h.Observe(1);
  r.AddGauge("t_gauge", "g", [] { return std::vector<std::pair<Labels, double>>{{{}, 4.5}}; });
  const std::string text = r.Render();
  EXPECT_NE(text.find("# TYPE t_total counter\nt_total{kind=\"a\\\"b\"} 3\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("t_seconds_bucket{le=\"0.001\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("t_seconds_bucket{le=\"0.01\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("t_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("t_seconds_count 3\n"), std::string::npos);
  EXPECT_NE(text.find("t_gauge 4.5\n"), std::string::npos);
}

}  // namespace
}  // namespace tiletune::server
