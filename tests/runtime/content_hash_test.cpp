#include "runtime/content_hash.h"

#include <gtest/gtest.h>

namespace tiletune::runtime {
namespace {

TEST(ContentHash, MatchesPublishedSha256Vectors) {
  EXPECT_EQ(ContentHash(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ContentHash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(ContentHash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(ContentHash(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(ContentHash, IncrementalUpdatesEqualOneShot) {
  const std::string text(200, 'x');
  for (size_t split : {0, 1, 55, 56, 63, 64, 65, 128, 199}) {
    ContentHasher h;
    h.Update(std::string_view(text).substr(0, split)).Update(std::string_view(text).substr(split));
    EXPECT_EQ(h.HexDigest(), ContentHash(text)) << "split at " << split;
  }
}

TEST(ContentHash, FieldsHaveOneReading) {
  EXPECT_NE(ContentHasher().UpdateField("ab").UpdateField("c").HexDigest(),
            ContentHasher().UpdateField("a").UpdateField("bc").HexDigest());
}

}  // namespace
}  // namespace tiletune::runtime
