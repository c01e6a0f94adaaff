#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/core/key_space.h"
#include "kernels/core/search_space.h"
#include "runtime/backend.h"
#include "tiletune/v1/jobs.pb.h"

namespace tiletune::tuner {

// What trying one variant showed a strategy.
struct Observation {
  std::optional<double> median_us;    // nullopt when the variant failed
  runtime::ResourceReport resources;  // the compiler's report (empty on the host)
  int64_t threads_per_block = 0;      // GPU launch block size; 0 on the host
};

// Decides which variant of a search space to try next. Strategies that learn
// from results (model-guided search) read them through Observe(). Next() may
// be called again before the previous variants are observed (the compile
// pool works ahead of the worker).
class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  // The next untried variant, or nullopt when the strategy has nothing left.
  virtual std::optional<kernels::Variant> Next() = 0;
  virtual void Observe(const kernels::Variant& variant, const Observation& observation) = 0;
};

// Every valid variant, the key's templates taking turns (each template's own
// variants in index order), so that a budget smaller than the space still
// tries every template that serves the key.
class ExhaustiveStrategy final : public SearchStrategy {
 public:
  explicit ExhaustiveStrategy(std::vector<kernels::Variant> variants);
  std::optional<kernels::Variant> Next() override;
  void Observe(const kernels::Variant&, const Observation&) override {}

 private:
  std::vector<kernels::Variant> variants_;
  size_t next_ = 0;
};

// Valid variants in a seeded random order, without repeats, after the
// space's preferred ones (`first`, KeySpace::PreferredVariants) in their
// order: the same seed gives the same order, so a resumed job keeps its plan.
class RandomStrategy final : public SearchStrategy {
 public:
  RandomStrategy(std::vector<kernels::Variant> variants, uint64_t seed,
                 const std::vector<kernels::Variant>& first = {});
  std::optional<kernels::Variant> Next() override;
  void Observe(const kernels::Variant&, const Observation&) override {}

 private:
  std::vector<kernels::Variant> variants_;
  size_t next_ = 0;
};

// Per-multiprocessor limits an occupancy estimate divides by. The defaults
// are those of NVIDIA sm_80/sm_90 (H100/H200); for AMD CDNA the same shape
// of estimate holds with its own numbers.
struct OccupancyLimits {
  int64_t registers_per_sm = 65536;
  int64_t shared_memory_per_sm = 228 * 1024;
  int64_t max_threads_per_sm = 2048;
  int64_t max_blocks_per_sm = 32;
};

// Resident threads per SM over the most an SM can hold (0..1), from a
// compile report and the block size; nullopt when the report is empty (host
// backend) and nothing can be said.
std::optional<double> EstimateOccupancy(const runtime::ResourceReport& resources,
                                        int64_t threads_per_block, const OccupancyLimits& limits);

// Simulated annealing over the space's neighbourhood structure (variants of
// one template whose parameter values sit close in each parameter's list;
// variants of other templates are never neighbours), with a cost
// model that ranks candidates before they are timed:
//  - the log run time predicted from measured variants, weighted by inverse
//    squared distance (failed variants count as twice the slowest), and
//  - the occupancy the compile reports of the nearest measured variants
//    imply, as a small penalty for low occupancy (GPU backends only).
// The space's preferred variants (SearchSpace::Prefer) and a few seeded
// random samples seed the model; then each step proposes the
// best-ranked of the untried variants nearest the current state, and the
// state moves to a measured variant when it is faster, or with probability
// exp(-Δlog t / T) when slower, T cooling each step. The random samples are
// drawn from every template. Deterministic for a seed and a sequence of
// observations. `valid` is space.ValidVariants().
class AnnealingStrategy final : public SearchStrategy {
 public:
  AnnealingStrategy(const kernels::KeySpace& space, std::vector<kernels::Variant> valid,
                    uint64_t seed, OccupancyLimits limits = OccupancyLimits{});
  // One template's space (variants without kernels::kTemplateParameter).
  AnnealingStrategy(const kernels::SearchSpace& space, std::vector<kernels::Variant> valid,
                    uint64_t seed, OccupancyLimits limits = OccupancyLimits{});
  std::optional<kernels::Variant> Next() override;
  void Observe(const kernels::Variant& variant, const Observation& observation) override;

  // The model's predicted log run time of an untried variant (lower is
  // better); nullopt before anything was measured. Exposed for tests.
  std::optional<double> PredictedCost(const kernels::Variant& variant) const;

 private:
  // Where a variant sits: its template, and its normalised parameter
  // indexes among that template's parameters.
  struct Position {
    int64_t kernel = 0;
    std::vector<double> indexes;
  };
  static double SquaredDistance(const Position& a, const Position& b);
  AnnealingStrategy(std::vector<std::vector<kernels::Parameter>> parameters,
                    std::vector<kernels::Variant> valid, uint64_t seed, OccupancyLimits limits);

  struct Measured {
    Position position;
    double log_time = 0;  // for failures: filled when ranking
    bool failed = false;
    std::optional<double> occupancy;
  };
  Position PositionOf(const kernels::Variant& variant) const;

  std::vector<std::vector<kernels::Parameter>> parameters_;  // per template
  std::vector<kernels::Variant> variants_;                   // valid, in index order
  std::vector<kernels::Variant> first_;                      // preferred, in order
  std::set<std::string> proposed_;
  std::map<std::string, Measured> measured_;
  OccupancyLimits limits_;
  std::mt19937_64 rng_;
  std::optional<kernels::Variant> state_;
  double state_log_time_ = 0;
  double temperature_;
  size_t initial_samples_;
};

// `valid` is space.ValidVariants(): the caller computes it once per item,
// since it needs it too (the plan's size).
std::unique_ptr<SearchStrategy> MakeSearchStrategy(v1::Strategy strategy,
                                                   const kernels::KeySpace& space,
                                                   std::vector<kernels::Variant> valid,
                                                   uint64_t seed);

}  // namespace tiletune::tuner
