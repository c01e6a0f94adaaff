#include "tuner/search_strategy.h"

#include <algorithm>
#include <random>

namespace tiletune::tuner {

ExhaustiveStrategy::ExhaustiveStrategy(std::vector<kernels::Variant> variants)
    : variants_(std::move(variants)) {}

std::optional<kernels::Variant> ExhaustiveStrategy::Next() {
  if (next_ >= variants_.size()) return std::nullopt;
  return variants_[next_++];
}

RandomStrategy::RandomStrategy(std::vector<kernels::Variant> variants, uint64_t seed)
    : variants_(std::move(variants)) {
  // mt19937_64 is specified exactly by the standard, so the order is the same
  // on every platform; std::shuffle's use of it is not, hence Fisher-Yates here.
  std::mt19937_64 rng(seed);
  for (size_t i = variants_.size(); i > 1; --i) {
    std::swap(variants_[i - 1], variants_[rng() % i]);
  }
}

std::optional<kernels::Variant> RandomStrategy::Next() {
  if (next_ >= variants_.size()) return std::nullopt;
  return variants_[next_++];
}

std::unique_ptr<SearchStrategy> MakeSearchStrategy(v1::Strategy strategy,
                                                   const kernels::SearchSpace& space,
                                                   uint64_t seed) {
  if (strategy == v1::STRATEGY_EXHAUSTIVE) {
    return std::make_unique<ExhaustiveStrategy>(space.ValidVariants());
  }
  return std::make_unique<RandomStrategy>(space.ValidVariants(), seed);
}

}  // namespace tiletune::tuner
