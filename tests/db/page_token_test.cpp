#include "db/page_token.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tiletune::db {
namespace {

TEST(PageToken, RoundTripsAnyBytes) {
  std::vector<std::string> key = {"gemm", std::string("a:b\0c", 5), "", "12:34"};
  EXPECT_EQ(DecodePageToken(EncodePageToken(key), 4), key);
}

TEST(PageToken, RefusesWhatItDidNotWrite) {
  auto token = EncodePageToken({"gemm", "key"});
  EXPECT_THROW(DecodePageToken(token, 3), std::invalid_argument);
  EXPECT_THROW(DecodePageToken(token.substr(0, token.size() - 2), 2), std::invalid_argument);
  EXPECT_THROW(DecodePageToken("xyz", 1), std::invalid_argument);
  EXPECT_THROW(DecodePageToken(EncodePageToken({"99:oops"}).substr(2), 1), std::invalid_argument);
  EXPECT_EQ(PageTokenInt("-42"), -42);
  EXPECT_THROW(PageTokenInt("4x"), std::invalid_argument);
}

TEST(PageToken, PageSizeDefaultsAndCaps) {
  EXPECT_EQ(EffectivePageSize(0), kDefaultPageSize);
  EXPECT_EQ(EffectivePageSize(-5), kDefaultPageSize);
  EXPECT_EQ(EffectivePageSize(7), 7);
  EXPECT_EQ(EffectivePageSize(1'000'000), kMaxPageSize);
}

}  // namespace
}  // namespace tiletune::db
