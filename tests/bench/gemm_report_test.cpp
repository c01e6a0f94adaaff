// tiletune-bench-gemm's report of a row, without a GPU: the table's lines
// and the JSON name each family's fastest variant; the JSON lists every trial.
#include <gtest/gtest.h>

#include <sstream>

#include "bench/gpu/gemm/gemm_report.h"

namespace tiletune::bench {
namespace {

TEST(GemmReport, NamesTheFastestVariantOfEachFamily) {
  ComparisonRow row;
  row.shape = {2048, 4096, 4096};
  SessionChoice& c = row.tiletune.choice;
  c.per_template["tile_gemm"] = {30, 712.5, "block_m=128,block_n=128"};
  c.per_template["tma_ws_gemm"] = {12, 185.8, "block_m=128,block_n=256"};
  c.per_template["gpu_gemm_tiled"] = {4, 0, ""};
  c.trials = {{"tma_ws_gemm", "block_m=128,cluster_m=2", "TRIAL_OK", 185.8},
              {"gpu_gemm_tiled", "block=16", "TRIAL_WRONG_RESULT", 0}};
  std::ostringstream table;
  PrintTable({row}, table);
  EXPECT_NE(table.str().find("2048x4096x4096 plain: fastest of each family: gpu_gemm_tiled none "
                             "passed (4 trials), tile_gemm 712.5 us (30 trials), tma_ws_gemm "
                             "185.8 us (12 trials)"),
            std::string::npos)
      << table.str();

  const nlohmann::json json = ReportJson({row}, nlohmann::json::object());
  const nlohmann::json& families = json["rows"][0]["tiletune"]["per_template"];
  EXPECT_EQ(families["tma_ws_gemm"]["trials"], 12);
  EXPECT_DOUBLE_EQ(families["tma_ws_gemm"]["best_us"].get<double>(), 185.8);
  EXPECT_EQ(families["tma_ws_gemm"]["best_variant"], "block_m=128,block_n=256");
  EXPECT_EQ(families["gpu_gemm_tiled"]["best_us"], 0);
  // Every trial, passed or not, with its variant.
  const nlohmann::json& trials = json["rows"][0]["tiletune"]["trials"];
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0]["variant"], "block_m=128,cluster_m=2");
  EXPECT_DOUBLE_EQ(trials[0]["median_us"].get<double>(), 185.8);
  EXPECT_EQ(trials[1]["status"], "TRIAL_WRONG_RESULT");
}

// A gated row does twice the FLOPs of its shape: TFLOP/s count both
// products.
TEST(GemmReport, AGatedRowCountsBothProducts) {
  ComparisonRow plain;
  plain.shape = {2048, 1000, 4000};
  VendorResult best;
  best.timing.set_median_us(100.0);
  plain.best = best;
  ComparisonRow gated = plain;
  gated.epilogue = Epilogue::kSwiglu;
  const nlohmann::json json = ReportJson({plain, gated}, nlohmann::json::object());
  const double tflops = json["rows"][0]["cublaslt_best"]["timing"]["tflops"].get<double>();
  EXPECT_DOUBLE_EQ(tflops, 2.0 * 2048 * 1000 * 4000 / 100e-6 / 1e12);
  EXPECT_DOUBLE_EQ(json["rows"][1]["cublaslt_best"]["timing"]["tflops"].get<double>(), 2 * tflops);
  EXPECT_EQ(json["rows"][1]["epilogue"], "swiglu");
}

// One family: nothing to compare, no line.
TEST(GemmReport, OneFamilyGetsNoFamilyLine) {
  ComparisonRow row;
  row.shape = {16, 4096, 4096};
  row.tiletune.choice.per_template["tile_gemm"] = {40, 20.5, "block_m=16"};
  std::ostringstream table;
  PrintTable({row}, table);
  EXPECT_EQ(table.str().find("fastest of each family"), std::string::npos) << table.str();
}

}  // namespace
}  // namespace tiletune::bench
