#include "tests/support/prometheus_scrape.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

namespace tiletune::testing {

std::string Scrape::Value(const std::string& name,
                          const std::map<std::string, std::string>& labels) const {
  for (const auto& s : samples) {
    if (s.name == name && s.labels == labels) return s.value;
  }
  return "";
}

Scrape ParseScrape(const std::string& text) {
  static const std::regex kType(R"(# TYPE (\S+) (\S+))");
  static const std::regex kSample(R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+))");
  static const std::regex kLabel(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?)re");
  Scrape scrape;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, kType)) {
      scrape.types[m[1]] = m[2];
    } else if (line.rfind('#', 0) != 0 && std::regex_match(line, m, kSample)) {
      MetricSample sample;
      sample.name = m[1];
      sample.value = m[3];
      const std::string labels = m[2];
      for (auto it = std::sregex_iterator(labels.begin(), labels.end(), kLabel);
           it != std::sregex_iterator(); ++it) {
        sample.labels[(*it)[1]] = (*it)[2];
      }
      scrape.samples.push_back(std::move(sample));
    } else if (line.rfind('#', 0) != 0) {
      ADD_FAILURE() << "not a Prometheus text line: " << line;
    }
  }
  return scrape;
}

}  // namespace tiletune::testing
