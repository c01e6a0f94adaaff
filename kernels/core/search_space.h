#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tiletune::kernels {

// One point of a search space: parameter name -> value.
using Variant = std::map<std::string, int64_t>;

// Name of the variant key that plants a fault in a generated kernel, for the
// tests of the benchmark worker's isolation. Never part of a search space;
// every kernel template honours it; the daemon adds such variants only under a testing flag.
//   1: the kernel loops forever        (the worker must time out)
//   2: it writes through a null pointer (SIGSEGV: the worker must crash)
//   3: it adds 1 to every output        (validation must reject it)
inline constexpr std::string_view kPlantedFault = "planted_fault";

struct Parameter {
  std::string name;
  std::vector<int64_t> values;
};

// A rule a variant must satisfy to be worth compiling (fits in shared memory,
// tile divides the warp layout, ...). `description` is what a rejected trial
// records.
struct Constraint {
  std::string description;
  std::function<bool(const Variant&)> holds;
};

// Why a variant is not a point of a space: `parameter` names the parameter
// it lacks, does not know or holds a value outside of; empty when the
// variant breaks a constraint.
struct VariantMismatch {
  std::string parameter;
  std::string message;
};

// The cartesian product of parameter values, filtered by constraints.
class SearchSpace {
 public:
  SearchSpace& Add(std::string name, std::vector<int64_t> values);
  SearchSpace& Require(std::string description, std::function<bool(const Variant&)> holds);
  // Variants a tuning run times first, rule by rule in the order added (a
  // rule's variants in index order): where measurements put the winners,
  // so that a budget smaller than the space still times them.
  SearchSpace& Prefer(std::string description, std::function<bool(const Variant&)> first);

  const std::vector<Parameter>& parameters() const { return parameters_; }
  // Points in the product before constraints.
  uint64_t product_size() const;
  // The point with this index in the product (mixed radix, last parameter
  // fastest). index < product_size().
  Variant At(uint64_t index) const;
  // The first constraint the variant breaks, or nullopt.
  std::optional<std::string> Violation(const Variant& variant) const;
  // Why `variant` is not a valid point of this space (exactly its
  // parameters, each at one of its values, every constraint held), or
  // nullopt when it is one.
  std::optional<VariantMismatch> Mismatch(const Variant& variant) const;
  // The space of `variant` alone (a valid point: Mismatch is nullopt).
  SearchSpace Only(const Variant& variant) const;
  // Every point that satisfies all constraints, in index order.
  std::vector<Variant> ValidVariants() const;
  // The index of the first Prefer rule `variant` meets, or nullopt.
  std::optional<size_t> PreferenceOf(const Variant& variant) const;

 private:
  std::vector<Parameter> parameters_;
  std::vector<Constraint> constraints_;
  std::vector<Constraint> preferences_;
};

// "tile_m=64,tile_n=32" — stable text for logs and hashing.
std::string VariantString(const Variant& variant);

// The value of a required variant parameter; throws std::invalid_argument
// naming the template and the parameter when it is missing.
int64_t RequiredParam(const Variant& variant, std::string_view kernel_name,
                      const std::string& name);

// The planted fault a variant asks for (0: none); throws on an unknown one.
int64_t PlantedFault(const Variant& variant);

}  // namespace tiletune::kernels
