#include "tuner/search_strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace tiletune::tuner {
namespace {

// How many of the untried variants nearest the current state the model ranks.
constexpr size_t kNeighbourhood = 8;
// Cooling per observed variant, and the starting temperature in units of
// log run time (0.1: a 10% slower variant is accepted about 1 time in e).
constexpr double kCooling = 0.9;
constexpr double kStartTemperature = 0.1;
// A failed variant counts as this factor slower than the slowest measured.
constexpr double kFailurePenalty = 2.0;
// Weight of (1 - occupancy) in the cost, in units of log run time: enough
// to break ties among similar predictions, not to override measurements.
constexpr double kOccupancyWeight = 0.1;

double Uniform(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1p-53;
}

std::vector<std::vector<kernels::Parameter>> ParametersOf(const kernels::KeySpace& space) {
  std::vector<std::vector<kernels::Parameter>> parameters;
  for (const auto& t : space.templates()) parameters.push_back(t.space.parameters());
  return parameters;
}

}  // namespace

double AnnealingStrategy::SquaredDistance(const Position& a, const Position& b) {
  if (a.kernel != b.kernel) return std::numeric_limits<double>::infinity();
  double d = 0;
  for (size_t i = 0; i < a.indexes.size(); ++i) {
    d += (a.indexes[i] - b.indexes[i]) * (a.indexes[i] - b.indexes[i]);
  }
  return d;
}

ExhaustiveStrategy::ExhaustiveStrategy(std::vector<kernels::Variant> variants) {
  std::map<int64_t, std::vector<kernels::Variant>> by_template;
  for (auto& v : variants) by_template[kernels::TemplateIndexOf(v)].push_back(std::move(v));
  for (size_t turn = 0; variants_.size() < variants.size(); ++turn) {
    for (auto& [index, own] : by_template) {
      if (turn < own.size()) variants_.push_back(std::move(own[turn]));
    }
  }
}

std::optional<kernels::Variant> ExhaustiveStrategy::Next() {
  if (next_ >= variants_.size()) return std::nullopt;
  return variants_[next_++];
}

RandomStrategy::RandomStrategy(std::vector<kernels::Variant> variants, uint64_t seed,
                               const std::vector<kernels::Variant>& first)
    : variants_(std::move(variants)) {
  // mt19937_64 is specified exactly by the standard, so the order is the same
  // on every platform; std::shuffle's use of it is not, hence Fisher-Yates here.
  std::mt19937_64 rng(seed);
  for (size_t i = variants_.size(); i > 1; --i) {
    std::swap(variants_[i - 1], variants_[rng() % i]);
  }
  // Each variant's place in `first` (first.size() for the rest), named once.
  std::map<std::string, size_t> place;
  for (const auto& v : first) place.emplace(kernels::VariantString(v), place.size());
  std::vector<std::pair<size_t, kernels::Variant>> ranked;
  for (auto& v : variants_) {
    const auto it = place.find(kernels::VariantString(v));
    ranked.emplace_back(it == place.end() ? first.size() : it->second, std::move(v));
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < ranked.size(); ++i) variants_[i] = std::move(ranked[i].second);
}

std::optional<kernels::Variant> RandomStrategy::Next() {
  if (next_ >= variants_.size()) return std::nullopt;
  return variants_[next_++];
}

std::optional<double> EstimateOccupancy(const runtime::ResourceReport& resources,
                                        int64_t threads_per_block, const OccupancyLimits& limits) {
  if (threads_per_block <= 0 || (resources.registers <= 0 && resources.shared_memory_bytes <= 0)) {
    return std::nullopt;
  }
  int64_t blocks =
      std::min(limits.max_blocks_per_sm, limits.max_threads_per_sm / threads_per_block);
  if (resources.registers > 0) {
    blocks = std::min(blocks, limits.registers_per_sm / (resources.registers * threads_per_block));
  }
  if (resources.shared_memory_bytes > 0) {
    blocks = std::min(blocks, limits.shared_memory_per_sm / resources.shared_memory_bytes);
  }
  return std::min(1.0, static_cast<double>(blocks * threads_per_block) /
                           static_cast<double>(limits.max_threads_per_sm));
}

AnnealingStrategy::AnnealingStrategy(const kernels::KeySpace& space,
                                     std::vector<kernels::Variant> valid, uint64_t seed,
                                     OccupancyLimits limits)
    : AnnealingStrategy(ParametersOf(space), std::move(valid), seed, limits) {
  first_ = space.PreferredVariants(variants_);
}

AnnealingStrategy::AnnealingStrategy(const kernels::SearchSpace& space,
                                     std::vector<kernels::Variant> valid, uint64_t seed,
                                     OccupancyLimits limits)
    : AnnealingStrategy(std::vector<std::vector<kernels::Parameter>>{space.parameters()},
                        std::move(valid), seed, limits) {
  first_ = kernels::KeySpace({{nullptr, space}}).PreferredVariants(variants_);
}

AnnealingStrategy::AnnealingStrategy(std::vector<std::vector<kernels::Parameter>> parameters,
                                     std::vector<kernels::Variant> valid, uint64_t seed,
                                     OccupancyLimits limits)
    : parameters_(std::move(parameters)),
      variants_(std::move(valid)),
      limits_(limits),
      rng_(seed),
      temperature_(kStartTemperature),
      initial_samples_(std::clamp<size_t>(variants_.size() / 16, 3, 8)) {}

AnnealingStrategy::Position AnnealingStrategy::PositionOf(const kernels::Variant& variant) const {
  Position position{.kernel = kernels::TemplateIndexOf(variant)};
  for (const auto& p : parameters_.at(position.kernel)) {
    const auto it = variant.find(p.name);
    const auto at = it == variant.end() ? p.values.end()
                                        : std::find(p.values.begin(), p.values.end(), it->second);
    const double index = at == p.values.end() ? 0 : static_cast<double>(at - p.values.begin());
    position.indexes.push_back(
        p.values.size() > 1 ? index / static_cast<double>(p.values.size() - 1) : 0);
  }
  return position;
}

std::optional<double> AnnealingStrategy::PredictedCost(const kernels::Variant& variant) const {
  double slowest = -std::numeric_limits<double>::infinity();
  for (const auto& [key, m] : measured_) {
    if (!m.failed) slowest = std::max(slowest, m.log_time);
  }
  if (!std::isfinite(slowest)) return std::nullopt;
  const Position position = PositionOf(variant);
  double weighted = 0, weights = 0;
  double nearest = std::numeric_limits<double>::infinity();
  std::optional<double> occupancy;
  for (const auto& [key, m] : measured_) {
    const double d2 = SquaredDistance(position, m.position);
    if (std::isinf(d2)) continue;  // another template's variant says nothing here
    const double log_time = m.failed ? slowest + std::log(kFailurePenalty) : m.log_time;
    if (d2 == 0) return log_time;
    weighted += log_time / d2;
    weights += 1 / d2;
    if (m.occupancy && d2 < nearest) {
      nearest = d2;
      occupancy = m.occupancy;
    }
  }
  if (weights == 0) return std::nullopt;
  return weighted / weights + kOccupancyWeight * (1 - occupancy.value_or(1));
}

std::optional<kernels::Variant> AnnealingStrategy::Next() {
  std::vector<const kernels::Variant*> untried;
  for (const auto& v : variants_) {
    if (!proposed_.contains(kernels::VariantString(v))) untried.push_back(&v);
  }
  if (untried.empty()) return std::nullopt;
  const kernels::Variant* pick = nullptr;
  // The space's preferred variants come first.
  const auto preferred = std::find_if(first_.begin(), first_.end(), [&](const auto& v) {
    return !proposed_.contains(kernels::VariantString(v));
  });
  if (preferred != first_.end()) {
    pick = &*preferred;
  } else if (proposed_.size() < first_.size() + initial_samples_ || !state_) {
    pick = untried[rng_() % untried.size()];
  } else {
    // The untried variants nearest the state (index order among equals),
    // ranked by the model.
    const Position here = PositionOf(*state_);
    std::stable_sort(untried.begin(), untried.end(), [&](const auto* a, const auto* b) {
      return SquaredDistance(PositionOf(*a), here) < SquaredDistance(PositionOf(*b), here);
    });
    untried.resize(std::min(untried.size(), kNeighbourhood));
    double best = std::numeric_limits<double>::infinity();
    for (const auto* candidate : untried) {
      const double cost = PredictedCost(*candidate).value_or(0);
      if (cost < best) {
        best = cost;
        pick = candidate;
      }
    }
  }
  proposed_.insert(kernels::VariantString(*pick));
  return *pick;
}

void AnnealingStrategy::Observe(const kernels::Variant& variant, const Observation& observation) {
  Measured m;
  m.position = PositionOf(variant);
  m.failed = !observation.median_us || !(*observation.median_us > 0);
  m.occupancy = EstimateOccupancy(observation.resources, observation.threads_per_block, limits_);
  if (!m.failed) m.log_time = std::log(*observation.median_us);
  measured_[kernels::VariantString(variant)] = m;
  if (m.failed) return;
  const bool accept = !state_ || m.log_time < state_log_time_ ||
                      Uniform(rng_) < std::exp(-(m.log_time - state_log_time_) / temperature_);
  if (accept) {
    state_ = variant;
    state_log_time_ = m.log_time;
  }
  temperature_ *= kCooling;
}

std::unique_ptr<SearchStrategy> MakeSearchStrategy(v1::Strategy strategy,
                                                   const kernels::KeySpace& space,
                                                   std::vector<kernels::Variant> valid,
                                                   uint64_t seed) {
  switch (strategy) {
    case v1::STRATEGY_EXHAUSTIVE: return std::make_unique<ExhaustiveStrategy>(std::move(valid));
    case v1::STRATEGY_ANNEALING:
      return std::make_unique<AnnealingStrategy>(space, std::move(valid), seed);
    default: {
      std::vector<kernels::Variant> first = space.PreferredVariants(valid);
      return std::make_unique<RandomStrategy>(std::move(valid), seed, first);
    }
  }
}

}  // namespace tiletune::tuner
