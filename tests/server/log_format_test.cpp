// tiletuned's log lines: text and JSON, both with the time's UTC offset.
#include "server/log_format.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "server/daemon_config.h"

namespace tiletune::server {
namespace {

// What a logger with MakeLogFormatter(format) writes for `lines`.
std::string Logged(const std::string& format, const std::vector<std::string>& lines) {
  std::ostringstream out;
  spdlog::logger logger("test", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  logger.set_formatter(MakeLogFormatter(format));
  for (const auto& line : lines) logger.warn("{}", line);
  return out.str();
}

// RFC 3339 with milliseconds and a numeric offset.
const std::regex kTime(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d)");

TEST(LogFormat, TextLinesCarryTheTimeWithItsZone) {
  const std::string line = Logged("text", {"job=3: queued"});
  std::smatch time;
  ASSERT_TRUE(std::regex_search(line, time, kTime)) << line;
  EXPECT_EQ(time.position(0), 0) << line;
  EXPECT_EQ(line.substr(time.length(0)), " warning job=3: queued\n");
}

TEST(LogFormat, JsonLinesAreOneObjectEach) {
  const std::string text = Logged(
      "json", {"job=3 item=0 device=cpu:0: tuning gemm|m=64", "a \"quoted\"\nsecond\tline\x01",
               std::string("cut mid-character: \xC3", 20) + " and \xFF\xFE bytes", "plain"});
  std::istringstream lines(text);
  std::vector<nlohmann::json> parsed;
  for (std::string line; std::getline(lines, line);) {
    ASSERT_NO_THROW(parsed.push_back(nlohmann::json::parse(line))) << line;
  }
  ASSERT_EQ(parsed.size(), 4u) << text;
  for (const auto& line : parsed) {
    EXPECT_TRUE(std::regex_match(line.at("time").get<std::string>(), kTime)) << line;
    EXPECT_EQ(line.at("level"), "warning");
    EXPECT_TRUE(line.at("fields").is_object());
  }
  EXPECT_EQ(parsed[0].at("message"), "job=3 item=0 device=cpu:0: tuning gemm|m=64");
  EXPECT_EQ(parsed[0].at("fields"),
            nlohmann::json({{"job", "3"}, {"item", "0"}, {"device", "cpu:0"}}));
  EXPECT_EQ(parsed[1].at("message"), "a \"quoted\"\nsecond\tline\x01");
  EXPECT_EQ(parsed[2].at("message"),
            "cut mid-character: \xEF\xBF\xBD and \xEF\xBF\xBD\xEF\xBF\xBD bytes");
  EXPECT_TRUE(parsed[3].at("fields").empty());
}

TEST(LogFormat, LeadingFieldsStopAtTheFirstOtherWord) {
  using Fields = std::vector<std::pair<std::string_view, std::string_view>>;
  EXPECT_EQ(LeadingFields("request=r1 peer=ipv4:127.0.0.1:5000 GetJob: storage error: x=1"),
            (Fields{{"request", "r1"}, {"peer", "ipv4:127.0.0.1:5000"}}));
  EXPECT_EQ(LeadingFields("job=7: done"), (Fields{{"job", "7"}}));
  EXPECT_EQ(LeadingFields("device cpu:0: quarantined"), Fields{});
  EXPECT_EQ(LeadingFields("Job=1 x"), Fields{});
  EXPECT_EQ(LeadingFields("job= x"), Fields{});
  EXPECT_EQ(LeadingFields("job=1"), (Fields{{"job", "1"}}));
}

TEST(LogFormat, ConfigTakesTextOrJson) {
  DaemonConfig config;
  EXPECT_EQ(config.log_format, "text");
  config.log_format = "json";
  EXPECT_FALSE(ValidateConfig(config));
  config.log_format = "logfmt";
  const auto error = ValidateConfig(config);
  ASSERT_TRUE(error);
  EXPECT_NE(error->message.find("log_format"), std::string::npos);
}

}  // namespace
}  // namespace tiletune::server
