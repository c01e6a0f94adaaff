#include "bench/gpu/gemm/gemm_report.h"

#include <fmt/format.h>

namespace tiletune::bench {
namespace {

double Teraflops(const GemmShape& s, double microseconds) {
  return microseconds > 0 ? 2.0 * s.m * s.n * s.k / (microseconds * 1e-6) / 1e12 : 0;
}

std::string Shape(const GemmShape& s) {
  return fmt::format("{}x{}x{}", s.m, s.n, s.k);
}

bool Timed(const std::optional<VendorResult>& v) {
  return v && v->wrong.empty();
}

// cuBLASLt time / tiletune time, or nothing when either is missing.
std::optional<double> Ratio(const ComparisonRow& row, const std::optional<VendorResult>& vendor) {
  if (!Timed(row.tiletune) || !Timed(vendor)) return std::nullopt;
  return vendor->timing.median_us() / row.tiletune.timed->timing.median_us();
}

std::string Cell(std::optional<double> value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : std::string("-");
}

nlohmann::json TimingJson(const GemmShape& shape, const v1::Timing& t) {
  return {{"median_us", t.median_us()},     {"min_us", t.min_us()},
          {"max_us", t.max_us()},           {"spread", t.spread()},
          {"repetitions", t.repetitions()}, {"tflops", Teraflops(shape, t.median_us())}};
}

nlohmann::json VendorJson(const GemmShape& shape, const std::optional<VendorResult>& v) {
  if (!v) return nullptr;
  return {{"algorithm", v->algorithm},
          {"timing", TimingJson(shape, v->timing)},
          {"rel_error", v->rel_error},
          {"wrong", v->wrong}};
}

nlohmann::json OptionalJson(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

void PrintTable(const std::vector<ComparisonRow>& rows, std::ostream& out) {
  out << fmt::format(
      "{:<18} {:<23} {:>10} {:>8} {:>10} {:>8} {:>7} {:>10} {:>7} {:>9} {:>9} {:<6}  {}\n",
      "shape (MxNxK)", "epilogue", "tt us", "tt TF/s", "cublasLt", "lt TF/s", "ratio", "unfused",
      "ratio", "tt err", "lt err", "serves", "tuned variant");
  for (const ComparisonRow& row : rows) {
    const SessionChoice& c = row.tiletune.choice;
    const auto tt =
        Timed(row.tiletune) ? std::optional(row.tiletune.timed->timing.median_us()) : std::nullopt;
    const auto lt =
        Timed(row.vendor) ? std::optional(row.vendor->timing.median_us()) : std::nullopt;
    const auto unf =
        Timed(row.unfused) ? std::optional(row.unfused->timing.median_us()) : std::nullopt;
    out << fmt::format(
        "{:<18} {:<23} {:>10} {:>8} {:>10} {:>8} {:>7} {:>10} {:>7} {:>9} {:>9} {:<6}  {}\n",
        Shape(row.shape), EpilogueName(row.epilogue), Cell(tt, "{:.1f}"),
        Cell(tt ? std::optional(Teraflops(row.shape, *tt)) : std::nullopt, "{:.1f}"),
        Cell(lt, "{:.1f}"),
        Cell(lt ? std::optional(Teraflops(row.shape, *lt)) : std::nullopt, "{:.1f}"),
        Cell(Ratio(row, row.vendor), "{:.3f}"), Cell(unf, "{:.1f}"),
        Cell(Ratio(row, row.unfused), "{:.3f}"),
        Cell(Timed(row.tiletune) ? std::optional(row.tiletune.timed->rel_error) : std::nullopt,
             "{:.2e}"),
        Cell(row.vendor ? std::optional(row.vendor->rel_error) : std::nullopt, "{:.2e}"),
        c.served.empty() ? "-" : c.served, c.variant ? kernels::VariantString(*c.variant) : "-");
  }
  for (const ComparisonRow& row : rows) {
    const std::string name = Shape(row.shape) + " " + EpilogueName(row.epilogue);
    const SessionChoice& c = row.tiletune.choice;
    if (!row.error.empty()) out << name << ": " << row.error << "\n";
    if (!c.error.empty()) out << name << ": the tuner failed: " << c.error << "\n";
    if (c.compile_failed + c.rejected + c.run_failed + c.wrong > 0) {
      out << fmt::format(
          "{}: {} variants, {} failed to compile, {} rejected, {} failed to run, {} wrong; "
          "first: {}\n",
          name, c.variants, c.compile_failed, c.rejected, c.run_failed, c.wrong, c.first_failure);
    }
    if (c.served == "vendor") {
      out << fmt::format("{}: the daemon would serve {} (VENDOR): {}\n", name, c.baseline_name,
                         c.decision);
    }
    if (row.tiletune.timed && !row.tiletune.timed->error.empty())
      out << name << ": " << kernels::VariantString(*c.variant) << ": " << row.tiletune.timed->error
          << "\n";
    for (const auto* v : {&row.vendor, &row.unfused}) {
      if (*v && !(*v)->wrong.empty())
        out << name << ": cuBLASLt output wrong: " << (*v)->wrong << "\n";
    }
  }
}

nlohmann::json ReportJson(const std::vector<ComparisonRow>& rows, const nlohmann::json& device) {
  nlohmann::json list = nlohmann::json::array();
  for (const ComparisonRow& row : rows) {
    const TunedVariant& t = row.tiletune;
    nlohmann::json tiletune = SessionChoiceJson(t.choice);
    tiletune["timing_error"] = t.timed ? t.timed->error : std::string();
    if (Timed(t)) {
      tiletune["timing"] = TimingJson(row.shape, t.timed->timing);
      tiletune["rel_error"] = t.timed->rel_error;
    }
    nlohmann::json entry = {{"m", row.shape.m},
                            {"n", row.shape.n},
                            {"k", row.shape.k},
                            {"epilogue", EpilogueName(row.epilogue)},
                            {"tiletune", tiletune},
                            {"cublaslt", VendorJson(row.shape, row.vendor)},
                            {"cublaslt_unfused", VendorJson(row.shape, row.unfused)},
                            {"ratio_cublaslt_over_tiletune", OptionalJson(Ratio(row, row.vendor))},
                            {"ratio_unfused_over_tiletune", OptionalJson(Ratio(row, row.unfused))},
                            {"error", row.error}};
    list.push_back(std::move(entry));
  }
  return {{"benchmark", "tiletune-bench-gemm"}, {"device", device}, {"rows", list}};
}

}  // namespace tiletune::bench
