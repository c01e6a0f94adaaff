#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "kernels/search_space.h"
#include "tiletune/v1/jobs.pb.h"

namespace tiletune::tuner {

// Decides which variant of a search space to try next. Strategies that learn
// from results (model-guided search) read them through Observe().
class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  // The next untried variant, or nullopt when the strategy has nothing left.
  virtual std::optional<kernels::Variant> Next() = 0;
  // The measured median of a variant, or nullopt if it failed.
  virtual void Observe(const kernels::Variant& variant, std::optional<double> median_us) = 0;
};

// Every valid variant in index order.
class ExhaustiveStrategy final : public SearchStrategy {
 public:
  explicit ExhaustiveStrategy(std::vector<kernels::Variant> variants);
  std::optional<kernels::Variant> Next() override;
  void Observe(const kernels::Variant&, std::optional<double>) override {}

 private:
  std::vector<kernels::Variant> variants_;
  size_t next_ = 0;
};

// Valid variants in a seeded random order, without repeats: the same seed
// gives the same order, so a resumed job keeps its plan.
class RandomStrategy final : public SearchStrategy {
 public:
  RandomStrategy(std::vector<kernels::Variant> variants, uint64_t seed);
  std::optional<kernels::Variant> Next() override;
  void Observe(const kernels::Variant&, std::optional<double>) override {}

 private:
  std::vector<kernels::Variant> variants_;
  size_t next_ = 0;
};

std::unique_ptr<SearchStrategy> MakeSearchStrategy(v1::Strategy strategy,
                                                   const kernels::SearchSpace& space,
                                                   uint64_t seed);

}  // namespace tiletune::tuner
