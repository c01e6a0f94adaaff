#include "server/record_import.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include "kernels/core/key_space.h"
#include "runtime/device_class.h"
#include "server/import_verification.h"
#include "tuner/device_description_of.h"

namespace tiletune::server {
namespace {

// A CPU as the host backend fingerprints one (device_class left out, as
// older exports do: then the only device class of a line is the record's).
v1::DeviceFingerprint TestCpu() {
  v1::DeviceFingerprint fp;
  fp.set_vendor("cpu");
  fp.set_arch("x86_64");
  fp.set_name("test cpu");
  fp.set_compute_units(2);
  return fp;
}

// A record a host daemon could have measured: the first template serving
// the key on TestCpu, at its first valid variant.
v1::Record GoodRecord(int64_t m) {
  v1::Record r;
  r.mutable_key()->set_op("gemm");
  r.mutable_key()->set_input_dtype(v1::DTYPE_F32);
  for (auto [name, size] : {std::pair{"m", m}, {"n", int64_t{8}}, {"k", int64_t{8}}}) {
    auto* d = r.mutable_key()->add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  *r.mutable_device() = TestCpu();
  r.set_device_class(runtime::DeviceClassId(TestCpu()));
  r.set_winner(v1::WINNER_TUNED);
  std::string why;
  const auto space = kernels::KeySpace::Of(
      kernels::NormalizeKernelKey(r.key()),
      tuner::DeviceDescriptionOf({.backend = "host", .fingerprint = TestCpu()}), &why);
  EXPECT_FALSE(space.empty()) << why;
  const auto& first = space.templates().front();
  r.mutable_config()->set_kernel_name(std::string(first.kernel->name()));
  const std::vector<kernels::Variant> variants = first.space.ValidVariants();
  for (const auto& [name, value] : variants.front()) {
    (*r.mutable_config()->mutable_params())[name] = value;
  }
  r.mutable_tuned()->set_median_us(3);
  r.mutable_baseline()->set_median_us(6);
  r.set_baseline_name("host-naive");
  r.set_speedup(2);
  r.set_max_rel_error(1e-7);
  r.mutable_roofline()->set_achieved_tflops(512.5);
  r.mutable_roofline()->set_fraction_of_floor(0.75);
  r.mutable_roofline()->mutable_ceilings()->set_source("measured copy 4.24 TB/s");
  return r;
}

std::string LineOf(const v1::Record& r) {
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(ToExportLine(r), &json).ok());
  return json;
}

std::string GoodLine(int64_t m) {
  return LineOf(GoodRecord(m));
}

TEST(RecordImport, GoodLinesParseWithCanonicalKeys) {
  auto parsed = ParseImportLines(GoodLine(4) + "\n\n" + GoodLine(5) + "\n", {});
  EXPECT_TRUE(parsed.rejects.empty()) << parsed.rejects.front().ShortDebugString();
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
  v1::Record no_class = GoodRecord(4);
  no_class.clear_device_class();
  const std::string text = "{not json\n" + bad_version + "\n" + bad_dim + "\n" + LineOf(no_class) +
                           "\n" + GoodLine(6) + "\n";
  auto parsed = ParseImportLines(text, {});
  ASSERT_EQ(parsed.rejects.size(), 4u);
  EXPECT_EQ(parsed.rejects[0].line(), 1);
  EXPECT_EQ(parsed.rejects[1].field(), "schema_version");
  EXPECT_EQ(parsed.rejects[2].field(), "record.key.shape[0].size");
  EXPECT_EQ(parsed.rejects[3].field(), "record.device_class");
  EXPECT_EQ(parsed.records.size(), 1u);
}

TEST(RecordImport, LongTextIsRejectedNamingTheFieldAndTheLimit) {
  v1::Record long_reason = GoodRecord(4);
  long_reason.mutable_decision()->set_reason(std::string(5000, 'r'));
  v1::Record long_class = GoodRecord(4);
  long_class.set_device_class(std::string(300, 'c'));
  std::string long_dim = GoodLine(4);
  long_dim.replace(long_dim.find("\"name\":\"m\""), 10,
                   "\"name\":\"" + std::string(300, 'm') + "\"");
  // The JSON parser quotes a bad value whole in its message.
  std::string bad_enum = GoodLine(4);
  bad_enum.replace(bad_enum.find("\"WINNER_TUNED\""), 14, "\"" + std::string(100000, 'w') + "\"");
  auto parsed = ParseImportLines(
      LineOf(long_reason) + "\n" + LineOf(long_class) + "\n" + long_dim + "\n" + bad_enum + "\n",
      {});
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
  EXPECT_TRUE(ParseImportLines(LineOf(long_reason), roomy).rejects.empty());
}

// The field a single line is rejected on, or "" when it is accepted.
std::string RejectedField(const std::string& line) {
  const auto parsed = ParseImportLines(line, {});
  if (parsed.rejects.empty()) return "";
  EXPECT_LT(parsed.rejects[0].message().size(), 400u) << parsed.rejects[0].message();
  return parsed.rejects[0].field() + ": " + parsed.rejects[0].message();
}

// Each record a daemon could not have measured is refused on the field that
// gives it away.
TEST(RecordImport, ImpossibleRecordsAreRejectedNamingTheField) {
  ASSERT_EQ(RejectedField(GoodLine(64)), "");

  v1::Record h200_on_cpu_class = GoodRecord(64);
  h200_on_cpu_class.mutable_device()->set_vendor("nvidia");
  h200_on_cpu_class.mutable_device()->set_arch("sm_90");
  h200_on_cpu_class.mutable_device()->set_name("NVIDIA H200");
  h200_on_cpu_class.mutable_device()->set_compute_units(132);
  EXPECT_EQ(RejectedField(LineOf(h200_on_cpu_class)).rfind("record.device: the fingerprint", 0), 0u)
      << RejectedField(LineOf(h200_on_cpu_class));

  v1::Record unknown_vendor = GoodRecord(64);
  unknown_vendor.mutable_device()->set_vendor("acme");
  unknown_vendor.set_device_class(runtime::DeviceClassId(unknown_vendor.device()));
  EXPECT_EQ(RejectedField(LineOf(unknown_vendor)).rfind("record.device.vendor:", 0), 0u);

  v1::Record no_fingerprint = GoodRecord(64);
  no_fingerprint.clear_device();
  EXPECT_EQ(RejectedField(LineOf(no_fingerprint)).rfind("record.device: is required", 0), 0u);

  v1::Record no_such_template = GoodRecord(64);
  no_such_template.mutable_config()->set_kernel_name("host_gemm_imaginary");
  (*no_such_template.mutable_config()->mutable_params())["tile_m"] = -64;
  EXPECT_EQ(RejectedField(LineOf(no_such_template)),
            "record.config.kernel_name: no kernel template is named 'host_gemm_imaginary'");

  // A real template of another backend.
  v1::Record cuda_template = GoodRecord(64);
  cuda_template.mutable_config()->set_kernel_name("tile_gemm");
  EXPECT_EQ(RejectedField(LineOf(cuda_template)),
            "record.config.kernel_name: template 'tile_gemm' (cuda) does not serve this key on a "
            "cpu device");

  v1::Record negative_tile = GoodRecord(64);
  (*negative_tile.mutable_config()->mutable_params())["tile_m"] = -64;
  EXPECT_EQ(RejectedField(LineOf(negative_tile)).rfind("record.config.params.tile_m: is -64;", 0),
            0u)
      << RejectedField(LineOf(negative_tile));

  v1::Record unknown_param = GoodRecord(64);
  (*unknown_param.mutable_config()->mutable_params())["planted_fault"] = 1;
  EXPECT_EQ(RejectedField(LineOf(unknown_param)),
            "record.config.params.planted_fault: is not a parameter of this space");

  v1::Record missing_param = GoodRecord(64);
  missing_param.mutable_config()->mutable_params()->erase("tile_k");
  EXPECT_EQ(RejectedField(LineOf(missing_param)), "record.config.params.tile_k: is missing");

  // In the parameters' values, but breaking a constraint of the key.
  v1::Record too_big_tile = GoodRecord(4);
  (*too_big_tile.mutable_config()->mutable_params())["tile_m"] = 128;
  (*too_big_tile.mutable_config()->mutable_params())["micro_m"] = 8;
  EXPECT_EQ(RejectedField(LineOf(too_big_tile)).rfind("record.config.params: breaks ", 0), 0u)
      << RejectedField(LineOf(too_big_tile));

  v1::Record huge_speedup = GoodRecord(64);
  huge_speedup.set_speedup(1e300);
  EXPECT_EQ(RejectedField(LineOf(huge_speedup)).rfind("record.speedup: is ", 0), 0u);

  v1::Record big_error = GoodRecord(64);
  big_error.set_max_rel_error(5);
  EXPECT_EQ(RejectedField(LineOf(big_error)).rfind("record.max_rel_error: is 5", 0), 0u)
      << RejectedField(LineOf(big_error));

  v1::Record no_baseline = GoodRecord(64);
  no_baseline.set_winner(v1::WINNER_VENDOR);
  no_baseline.clear_baseline();
  EXPECT_EQ(RejectedField(LineOf(no_baseline)).rfind("record.baseline.median_us: must be", 0), 0u);

  v1::Record negative_time = GoodRecord(64);
  negative_time.mutable_decision()->mutable_winner()->set_min_us(-1);
  EXPECT_EQ(RejectedField(LineOf(negative_time)),
            "record.decision.winner.min_us: must not be negative");

  v1::Record negative_candidate = GoodRecord(64);
  negative_candidate.add_baseline_candidates()->mutable_timing()->set_median_us(6);
  negative_candidate.add_baseline_candidates()->mutable_timing()->set_median_us(-6);
  EXPECT_EQ(RejectedField(LineOf(negative_candidate)),
            "record.baseline_candidates[1].timing.median_us: must not be negative");

  // A VENDOR record that timed no variant.
  v1::Record vendor = GoodRecord(64);
  vendor.set_winner(v1::WINNER_VENDOR);
  vendor.clear_config();
  vendor.clear_tuned();
  vendor.set_speedup(0);
  EXPECT_EQ(RejectedField(LineOf(vendor)), "");
}

TEST(RecordImport, TheBaselinesAlgorithmAndCandidatesComeBackAsExported) {
  // A record as a CUDA daemon keeps its cuBLASLt baseline (on the test CPU's
  // fingerprint: the import checks nothing of the algorithm but its times).
  v1::Record record = GoodRecord(64);
  v1::VendorAlgorithm algorithm;
  algorithm.set_description("cublasLt algo 1 of 2 (fused epilogue GELU_BIAS, workspace 0 bytes)");
  algorithm.set_heuristic_index(1);
  algorithm.set_heuristic_results(2);
  std::string algo(64, '\0');
  for (size_t i = 0; i < algo.size(); ++i) algo[i] = static_cast<char>(i * 37);  // any bytes
  algorithm.set_algo(algo);
  algorithm.set_library_version(130100);
  algorithm.set_workspace_bytes(4096);
  *record.mutable_baseline_algorithm() = algorithm;
  for (int index : {0, 1}) {
    v1::BaselineCandidate& c = *record.add_baseline_candidates();
    *c.mutable_algorithm() = algorithm;
    c.mutable_algorithm()->set_heuristic_index(index);
    c.mutable_timing()->set_median_us(7 - index);
    c.set_rel_error(1e-3);
  }
  record.mutable_baseline_candidates(0)->set_error("wrong result: relative error 0.5");
  record.mutable_baseline_candidates(0)->mutable_algorithm()->set_epilogue_pass(true);
  const auto parsed = ParseImportLines(LineOf(record), {});
  ASSERT_TRUE(parsed.rejects.empty()) << parsed.rejects.front().ShortDebugString();
  ASSERT_EQ(parsed.records.size(), 1u);
  const v1::Record& back = parsed.records[0].record;
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(back.baseline_algorithm(), algorithm));
  ASSERT_EQ(back.baseline_candidates_size(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back.baseline_candidates(i),
                                                                   record.baseline_candidates(i)))
        << i;
  }
  EXPECT_EQ(back.baseline_candidates(0).algorithm().algo(), algo);
}

TEST(RecordImport, NonFiniteNumbersAreRejectedNamingTheField) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  v1::Record nan_time = GoodRecord(64);
  nan_time.mutable_tuned()->set_median_us(nan);
  EXPECT_EQ(RejectedField(LineOf(nan_time)),
            "record.tuned.median_us: is NaN; must be a finite number");
  v1::Record inf_baseline = GoodRecord(64);
  inf_baseline.mutable_baseline()->set_median_us(inf);
  EXPECT_EQ(RejectedField(LineOf(inf_baseline)),
            "record.baseline.median_us: is infinite; must be a finite number");
  v1::Record nan_roofline = GoodRecord(64);
  nan_roofline.mutable_roofline()->set_achieved_tflops(nan);
  EXPECT_EQ(RejectedField(LineOf(nan_roofline)),
            "record.roofline.achieved_tflops: is NaN; must be a finite number");
  // As an independent client writes them.
  std::string text = GoodLine(64);
  text.replace(text.find("\"speedup\":2"), 11, "\"speedup\":\"-Infinity\"");
  EXPECT_EQ(RejectedField(text), "record.speedup: is infinite; must be a finite number");
}

// What a verify job's item leaves of the imported record.
TEST(RecordImport, AVerifyJobSettlesTheImportWithWhatItMeasured) {
  v1::Record imported = GoodRecord(64);
  imported.mutable_provenance()->set_trust(v1::TRUST_UNVERIFIED);
  imported.mutable_provenance()->set_source_daemon("far-away");
  imported.mutable_provenance()->set_source_speedup(2);

  v1::Record measured = GoodRecord(64);
  measured.set_speedup(1.5);
  measured.set_daemon("here");
  auto verified = SettledImport(imported, imported.config(), "j-1", measured, "");
  ASSERT_TRUE(verified);
  EXPECT_EQ(verified->daemon(), "here");
  EXPECT_EQ(verified->speedup(), 1.5);
  EXPECT_EQ(verified->provenance().trust(), v1::TRUST_VERIFIED);
  EXPECT_EQ(verified->provenance().source_daemon(), "far-away");
  EXPECT_EQ(verified->provenance().verify_job_id(), "j-1");
  EXPECT_NE(verified->provenance().verification().find("1.50x"), std::string::npos)
      << verified->provenance().verification();
  EXPECT_TRUE(Servable(*verified));

  measured.set_winner(v1::WINNER_VENDOR);
  auto lost = SettledImport(imported, imported.config(), "j-1", measured, "");
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->winner(), v1::WINNER_VENDOR);
  EXPECT_NE(lost->provenance().verification().find("did not beat"), std::string::npos);

  auto failed = SettledImport(imported, imported.config(), "j-1", std::nullopt, "compile failed");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->provenance().trust(), v1::TRUST_VERIFY_FAILED);
  EXPECT_NE(failed->provenance().verification().find("compile failed"), std::string::npos);
  EXPECT_FALSE(Servable(*failed));
  EXPECT_FALSE(Servable(imported));

  // Replaced meanwhile: by a tuning job's record, or an import of another
  // kernel; or gone.
  v1::Record tuned_here = GoodRecord(64);
  EXPECT_FALSE(SettledImport(tuned_here, imported.config(), "j-1", measured, ""));
  v1::Record other_kernel = imported;
  (*other_kernel.mutable_config()->mutable_params())["k_unroll"] += 3;
  EXPECT_FALSE(SettledImport(other_kernel, imported.config(), "j-1", measured, ""));
  EXPECT_FALSE(SettledImport(std::nullopt, imported.config(), "j-1", measured, ""));
}

}  // namespace
}  // namespace tiletune::server
