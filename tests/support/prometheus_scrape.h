#pragma once

#include <map>
#include <string>
#include <vector>

namespace tiletune::testing {

// A /metrics page in Prometheus text format, parsed.
struct MetricSample {
  std::string name;
  std::map<std::string, std::string> labels;
  std::string value;
};

struct Scrape {
  std::map<std::string, std::string> types;  // family name -> TYPE
  std::vector<MetricSample> samples;

  // The value of the series `name` with exactly `labels`; empty if none.
  std::string Value(const std::string& name,
                    const std::map<std::string, std::string>& labels) const;
};

// Fails the test on a line that is neither a comment nor a sample.
Scrape ParseScrape(const std::string& text);

}  // namespace tiletune::testing
