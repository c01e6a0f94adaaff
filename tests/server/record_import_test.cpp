#include "server/record_import.h"

#include <gtest/gtest.h>

#include <google/protobuf/util/json_util.h>

namespace tiletune::server {
namespace {

std::string GoodLine(int64_t m) {
  v1::Record r;
  r.mutable_key()->set_op("gemm");
  r.mutable_key()->set_input_dtype(v1::DTYPE_F32);
  for (auto [name, size] : {std::pair{"m", m}, {"n", int64_t{8}}, {"k", int64_t{8}}}) {
    auto* d = r.mutable_key()->add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  r.set_device_class("abc");
  r.set_winner(v1::WINNER_TUNED);
  r.mutable_config()->set_kernel_name("host_gemm_blocked");
  r.mutable_tuned()->set_median_us(3);
  r.mutable_roofline()->set_achieved_tflops(512.5);
  r.mutable_roofline()->set_fraction_of_floor(0.75);
  r.mutable_roofline()->mutable_ceilings()->set_source("measured copy 4.24 TB/s");
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(ToExportLine(r), &json).ok());
  return json;
}

TEST(RecordImport, GoodLinesParseWithCanonicalKeys) {
  auto parsed = ParseImportLines(GoodLine(4) + "\n\n" + GoodLine(5) + "\n", {});
  EXPECT_TRUE(parsed.rejects.empty());
  ASSERT_EQ(parsed.records.size(), 2u);
  EXPECT_EQ(parsed.records[0].line, 1);
  EXPECT_EQ(parsed.records[1].line, 3);
  EXPECT_NE(parsed.records[0].canonical_key.find("m=4"), std::string::npos);
  // The roofline and its ceilings' source come back from the JSON line.
  const auto& roofline = parsed.records[0].record.roofline();
  EXPECT_EQ(roofline.achieved_tflops(), 512.5);
  EXPECT_EQ(roofline.fraction_of_floor(), 0.75);
  EXPECT_EQ(roofline.ceilings().source(), "measured copy 4.24 TB/s");
}

TEST(RecordImport, EveryBadLineIsRejectedByNumberAndField) {
  std::string bad_version = GoodLine(4);
  bad_version.replace(bad_version.find("\"schemaVersion\":1"), 17, "\"schemaVersion\":9");
  std::string bad_dim = GoodLine(4);
  bad_dim.replace(bad_dim.find("\"size\":\"4\""), 10, "\"size\":\"-4\"");
  std::string no_class = GoodLine(4);
  no_class.replace(no_class.find("\"deviceClass\":\"abc\""), 19, "\"deviceClass\":\"\"");
  const std::string text =
      "{not json\n" + bad_version + "\n" + bad_dim + "\n" + no_class + "\n" + GoodLine(6) + "\n";
  auto parsed = ParseImportLines(text, {});
  ASSERT_EQ(parsed.rejects.size(), 4u);
  EXPECT_EQ(parsed.rejects[0].line(), 1);
  EXPECT_EQ(parsed.rejects[1].field(), "schema_version");
  EXPECT_EQ(parsed.rejects[2].field(), "record.key.shape[0].size");
  EXPECT_EQ(parsed.rejects[3].field(), "record.device_class");
  EXPECT_EQ(parsed.records.size(), 1u);
}

TEST(RecordImport, LongTextIsRejectedNamingTheFieldAndTheLimit) {
  std::string long_reason = GoodLine(4);
  long_reason.replace(long_reason.find("\"config\""), 0,
                      "\"decision\":{\"reason\":\"" + std::string(5000, 'r') + "\"},");
  std::string long_class = GoodLine(4);
  long_class.replace(long_class.find("\"deviceClass\":\"abc\""), 19,
                     "\"deviceClass\":\"" + std::string(300, 'c') + "\"");
  std::string long_dim = GoodLine(4);
  long_dim.replace(long_dim.find("\"name\":\"m\""), 10,
                   "\"name\":\"" + std::string(300, 'm') + "\"");
  // The JSON parser quotes a bad value whole in its message.
  std::string bad_enum = GoodLine(4);
  bad_enum.replace(bad_enum.find("\"WINNER_TUNED\""), 14, "\"" + std::string(100000, 'w') + "\"");
  auto parsed = ParseImportLines(
      long_reason + "\n" + long_class + "\n" + long_dim + "\n" + bad_enum + "\n", {});
  ASSERT_EQ(parsed.rejects.size(), 4u);
  EXPECT_EQ(parsed.rejects[0].field(), "record.decision.reason");
  EXPECT_EQ(parsed.rejects[0].message(), "is 5000 bytes; the limit is max_text_bytes 4096");
  EXPECT_EQ(parsed.rejects[1].field(), "record.device_class");
  EXPECT_EQ(parsed.rejects[1].message(), "is 300 bytes; the limit is max_name_bytes 256");
  EXPECT_EQ(parsed.rejects[2].field(), "record.key.shape[0].name");
  EXPECT_NE(parsed.rejects[2].message().find("max_name_bytes 256"), std::string::npos);
  EXPECT_EQ(parsed.rejects[3].line(), 4);
  EXPECT_LT(parsed.rejects[3].message().size(), 400u) << parsed.rejects[3].message().size();
  EXPECT_TRUE(parsed.records.empty());

  DaemonConfig roomy;
  roomy.max_text_bytes = 5000;
  EXPECT_TRUE(ParseImportLines(long_reason, roomy).rejects.empty());
}

}  // namespace
}  // namespace tiletune::server
