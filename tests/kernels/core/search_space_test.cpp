#include "kernels/core/search_space.h"

#include <gtest/gtest.h>

namespace tiletune::kernels {
namespace {

TEST(SearchSpace, EnumeratesProductInMixedRadixOrder) {
  SearchSpace s;
  s.Add("a", {1, 2}).Add("b", {10, 20, 30});
  ASSERT_EQ(s.product_size(), 6u);
  EXPECT_EQ(s.At(0), (Variant{{"a", 1}, {"b", 10}}));
  EXPECT_EQ(s.At(1), (Variant{{"a", 1}, {"b", 20}}));
  EXPECT_EQ(s.At(5), (Variant{{"a", 2}, {"b", 30}}));
}

TEST(SearchSpace, ConstraintsFilterAndNameTheRule) {
  SearchSpace s;
  s.Add("a", {1, 2, 4}).Add("b", {1, 2, 4});
  s.Require("a*b <= 4", [](const Variant& v) { return v.at("a") * v.at("b") <= 4; });
  EXPECT_EQ(s.ValidVariants().size(), 6u);
  EXPECT_EQ(s.Violation({{"a", 4}, {"b", 4}}), "a*b <= 4");
  EXPECT_FALSE(s.Violation({{"a", 2}, {"b", 2}}));
}

TEST(SearchSpace, EmptyValuesAreRejected) {
  SearchSpace s;
  EXPECT_THROW(s.Add("a", {}), std::invalid_argument);
}

TEST(SearchSpace, VariantStringIsSortedByName) {
  EXPECT_EQ(VariantString({{"z", 1}, {"a", 2}}), "a=2,z=1");
}

}  // namespace
}  // namespace tiletune::kernels
