#include "bench/gpu/gemm/gemm_report.h"

#include <fmt/format.h>

#include "runtime/baseline_candidate.h"

namespace tiletune::bench {
namespace {

// A gated row multiplies twice.
double Flops(const ComparisonRow& row) {
  const GemmShape& s = row.shape;
  return (row.epilogue == Epilogue::kSwiglu ? 4.0 : 2.0) * s.m * s.n * s.k;
}

double Teraflops(double flops, double microseconds) {
  return microseconds > 0 ? flops / (microseconds * 1e-6) / 1e12 : 0;
}

std::string Shape(const GemmShape& s) {
  return fmt::format("{}x{}x{}", s.m, s.n, s.k);
}

bool Timed(const std::optional<VendorResult>& v) {
  return v && v->wrong.empty();
}

// Its time / tiletune's time, or nothing when either is missing.
std::optional<double> Ratio(const ComparisonRow& row, const std::optional<VendorResult>& vendor) {
  if (!Timed(row.tiletune) || !Timed(vendor)) return std::nullopt;
  return vendor->timing.median_us() / row.tiletune.timed->timing.median_us();
}

std::string Cell(std::optional<double> value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : std::string("-");
}

// "3/8" for algo 3 of 8, "+pass" when our epilogue pass followed.
std::string AlgorithmShort(const std::optional<VendorResult>& v) {
  if (!v) return "-";
  return fmt::format("{}/{}{}", v->algorithm.heuristic_index(), v->algorithm.heuristic_results(),
                     v->algorithm.epilogue_pass() ? "+pass" : "");
}

nlohmann::json TimingJson(double flops, const v1::Timing& t) {
  return {{"median_us", t.median_us()},     {"min_us", t.min_us()},
          {"max_us", t.max_us()},           {"spread", t.spread()},
          {"repetitions", t.repetitions()}, {"tflops", Teraflops(flops, t.median_us())}};
}

nlohmann::json VendorJson(double flops, const VendorResult& v) {
  return {{"algorithm", v.algorithm.description()},
          {"heuristic_index", v.algorithm.heuristic_index()},
          {"heuristic_results", v.algorithm.heuristic_results()},
          {"epilogue_pass", v.algorithm.epilogue_pass()},
          {"workspace_bytes", v.algorithm.workspace_bytes()},
          {"timing", TimingJson(flops, v.timing)},
          {"rel_error", v.rel_error},
          {"wrong", v.wrong}};
}

nlohmann::json VendorJson(double flops, const std::optional<VendorResult>& v) {
  return v ? VendorJson(flops, *v) : nlohmann::json(nullptr);
}

nlohmann::json OptionalJson(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::optional<VendorResult> FastestVendor(const std::vector<VendorResult>& candidates) {
  // As the tuner's baseline step chooses (runtime/baseline_candidate.h).
  std::vector<v1::BaselineCandidate> timed;
  for (const VendorResult& v : candidates) {
    v1::BaselineCandidate& c = timed.emplace_back();
    *c.mutable_timing() = v.timing;
    c.set_error(v.wrong);
  }
  const v1::BaselineCandidate* fastest = runtime::FastestCandidate(timed);
  if (!fastest) return std::nullopt;
  return candidates[static_cast<size_t>(fastest - timed.data())];
}

void PrintTable(const std::vector<ComparisonRow>& rows, std::ostream& out) {
  constexpr const char* kRow =
      "{:<18} {:<23} {:>10} {:>8} {:>10} {:>7} {:>10} {:>7} {:>9} {:>9} {:<6}  {}\n";
  out << fmt::format(fmt::runtime(kRow), "shape (MxNxK)", "epilogue", "tt us", "tt TF/s",
                     "lt #0 us", "ratio", "best-of-N", "ratio", "best algo", "tt err", "serves",
                     "tuned variant");
  for (const ComparisonRow& row : rows) {
    const SessionChoice& c = row.tiletune.choice;
    const auto tt =
        Timed(row.tiletune) ? std::optional(row.tiletune.timed->timing.median_us()) : std::nullopt;
    const auto median = [](const std::optional<VendorResult>& v) {
      return Timed(v) ? std::optional(v->timing.median_us()) : std::nullopt;
    };
    out << fmt::format(
        fmt::runtime(kRow), Shape(row.shape), EpilogueName(row.epilogue), Cell(tt, "{:.1f}"),
        Cell(tt ? std::optional(Teraflops(Flops(row), *tt)) : std::nullopt, "{:.1f}"),
        Cell(median(row.heuristic0), "{:.1f}"), Cell(Ratio(row, row.heuristic0), "{:.3f}"),
        Cell(median(row.best), "{:.1f}"), Cell(Ratio(row, row.best), "{:.3f}"),
        AlgorithmShort(row.best),
        Cell(Timed(row.tiletune) ? std::optional(row.tiletune.timed->rel_error) : std::nullopt,
             "{:.2e}"),
        c.served.empty() ? "-" : c.served, c.variant ? kernels::VariantString(*c.variant) : "-");
  }
  for (const ComparisonRow& row : rows) {
    const std::string name = Shape(row.shape) + " " + EpilogueName(row.epilogue);
    const SessionChoice& c = row.tiletune.choice;
    if (row.best) {
      out << fmt::format("{}: best of {} cuBLASLt candidates: {}\n", name, row.candidates.size(),
                         row.best->algorithm.description());
    }
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
    if (c.per_template.size() > 1) {
      std::string families;
      for (const auto& [family, best] : c.per_template) {
        families += fmt::format(
            "{}{} {} ({} trials)", families.empty() ? "" : ", ", family,
            best.best_us > 0 ? fmt::format("{:.1f} us", best.best_us) : std::string("none passed"),
            best.trials);
      }
      out << fmt::format("{}: fastest of each family: {}\n", name, families);
    }
    if (row.tiletune.timed && !row.tiletune.timed->error.empty())
      out << name << ": " << kernels::VariantString(*c.variant) << ": " << row.tiletune.timed->error
          << "\n";
    for (const VendorResult& v : row.candidates) {
      if (!v.wrong.empty()) {
        out << fmt::format("{}: cuBLASLt {} failed: {}\n", name,
                           v.algorithm.description().empty() ? std::string("candidate")
                                                             : v.algorithm.description(),
                           v.wrong);
      }
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
      tiletune["timing"] = TimingJson(Flops(row), t.timed->timing);
      tiletune["rel_error"] = t.timed->rel_error;
    }
    nlohmann::json candidates = nlohmann::json::array();
    for (const VendorResult& v : row.candidates) candidates.push_back(VendorJson(Flops(row), v));
    nlohmann::json entry = {
        {"m", row.shape.m},
        {"n", row.shape.n},
        {"k", row.shape.k},
        {"epilogue", EpilogueName(row.epilogue)},
        {"tiletune", tiletune},
        {"cublaslt_heuristic0", VendorJson(Flops(row), row.heuristic0)},
        {"cublaslt_best", VendorJson(Flops(row), row.best)},
        {"cublaslt_candidates", candidates},
        {"ratio_heuristic0_over_tiletune", OptionalJson(Ratio(row, row.heuristic0))},
        {"ratio_best_over_tiletune", OptionalJson(Ratio(row, row.best))},
        {"error", row.error}};
    list.push_back(std::move(entry));
  }
  return {{"benchmark", "tiletune-bench-gemm"}, {"device", device}, {"rows", list}};
}

}  // namespace tiletune::bench
