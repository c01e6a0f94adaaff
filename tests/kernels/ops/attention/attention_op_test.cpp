#include "kernels/ops/attention/attention_op.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/core/kernel_key.h"
#include "kernels/core/op_registry.h"

namespace tiletune::kernels::attention {
namespace {

struct Shape {
  int64_t batch, q_heads, kv_heads, q_len, kv_len, head_dim;
};

v1::KernelKey Key(const Shape& s, v1::AttentionMask mask = v1::ATTENTION_MASK_NONE,
                  v1::SequenceLayout layout = v1::SEQUENCE_LAYOUT_BSHD) {
  v1::KernelKey key;
  key.set_op("attention");
  key.set_input_dtype(v1::DTYPE_F32);
  key.set_attention_mask(mask);
  key.set_sequence_layout(layout);
  for (const auto& [name, size] : {std::pair{"batch", s.batch},
                                   {"q_heads", s.q_heads},
                                   {"kv_heads", s.kv_heads},
                                   {"q_len", s.q_len},
                                   {"kv_len", s.kv_len},
                                   {"head_dim", s.head_dim}}) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  return key;
}

std::string Error(const v1::KernelKey& key) {
  const auto e = ValidateKernelKey(key, {});
  return e ? e->ToString() : "";
}

TEST(AttentionKey, ValidationNamesTheField) {
  EXPECT_EQ(Error(Key({2, 32, 8, 100, 100, 128})), "");
  EXPECT_EQ(Error(Key({2, 32, 6, 100, 100, 128})),
            "key.shape[2].size: q_heads (32) is not a multiple of kv_heads (6)");
  EXPECT_EQ(Error(Key({2, 32, 8, 100, 100, 96})),
            "key.shape[5].size: head_dim must be 64, 128 or 256, got 96");
  v1::KernelKey key = Key({2, 32, 8, 100, 100, 128});
  key.add_prologue()->set_op("relu");
  EXPECT_EQ(Error(key),
            "key.prologue: attention takes no prologue: its kernels read q, k and v "
            "as stored");
  key = Key({2, 32, 8, 100, 100, 128});
  key.set_attention_mask(static_cast<v1::AttentionMask>(7));
  EXPECT_EQ(Error(key), "key.attention_mask: is not a known mask kind");
  key = Key({2, 32, 8, 100, 100, 128});
  key.mutable_shape()->RemoveLast();
  EXPECT_EQ(Error(key), "key.shape: dimension 'head_dim' is required for attention");
}

TEST(AttentionKey, OtherOpsRefuseTheAttentionFields) {
  v1::KernelKey key;
  key.set_op("softmax");
  key.set_input_dtype(v1::DTYPE_F32);
  for (const auto& [name, size] : {std::pair{"rows", 4}, {"cols", 8}}) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  EXPECT_EQ(Error(key), "");
  key.set_attention_mask(v1::ATTENTION_MASK_CAUSAL);
  EXPECT_EQ(Error(key), "key.attention_mask: belongs to attention; this key is softmax");
  key.set_attention_mask(v1::ATTENTION_MASK_NONE);
  key.set_write_lse(true);
  EXPECT_EQ(Error(key), "key.write_lse: belongs to attention; this key is softmax");
}

TEST(AttentionKey, CanonicalStringSpellsMaskLayoutAndLse) {
  v1::KernelKey key = Key({1, 4, 2, 7, 9, 64}, v1::ATTENTION_MASK_CAUSAL, v1::SEQUENCE_LAYOUT_BHSD);
  EXPECT_EQ(CanonicalKeyString(key),
            "attention|chain=|in=f32|out=f32|acc=f32|layout=|shape=head_dim=64,kv_heads=2,kv_len=9,"
            "q_heads=4,q_len=7|mask=causal|seq=bhsd");
  key.set_write_lse(true);
  key.set_attention_mask(v1::ATTENTION_MASK_NONE);
  key.set_sequence_layout(v1::SEQUENCE_LAYOUT_BSHD);
  EXPECT_EQ(CanonicalKeyString(key),
            "attention|chain=|in=f32|out=f32|acc=f32|layout=|shape=head_dim=64,kv_heads=2,kv_len=9,"
            "q_heads=4,q_len=7|mask=none|seq=bshd|lse");
}

TEST(AttentionKey, CausalFlopsCountOnlyTheVisiblePairs) {
  // Bottom-right aligned: with 3 queries over 5 keys, query i sees i + 3 keys.
  EXPECT_EQ(VisiblePairs(Key({1, 1, 1, 3, 5, 64}, v1::ATTENTION_MASK_CAUSAL)), 3 + 4 + 5);
  // More queries than keys: the first two see none.
  EXPECT_EQ(VisiblePairs(Key({1, 1, 1, 4, 2, 64}, v1::ATTENTION_MASK_CAUSAL)), 0 + 0 + 1 + 2);
  EXPECT_EQ(ProblemFlops(Key({2, 4, 2, 3, 5, 64})), 4 * 2 * 4 * 15 * 64);
}

// The reference against a brute-force attention written the other way
// round: tensors indexed [b][h][s][d] whatever the layout, every score of a
// row materialised, hidden keys as -inf, exp without a max shift.
class AttentionReferenceTest
    : public ::testing::TestWithParam<std::tuple<v1::AttentionMask, v1::SequenceLayout>> {};

TEST_P(AttentionReferenceTest, MatchesBruteForceOnEveryRow) {
  const auto [mask_kind, layout] = GetParam();
  const Shape s{2, 4, 2, 5, 7, 64};
  v1::KernelKey key = NormalizeKernelKey(Key(s, mask_kind, layout));
  const OpSpec& spec = AttentionOp();
  NamedInts ints = FixedInts(key, spec);
  NamedFloats floats = DefaultFloats(spec);
  std::mt19937 engine(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  const auto draw = [&](int64_t n) {
    std::vector<float> t(static_cast<size_t>(n));
    for (float& x : t) x = uniform(engine);
    return t;
  };
  NamedTensors tensors;
  tensors["q"] = draw(s.batch * s.q_heads * s.q_len * s.head_dim);
  tensors["k"] = draw(s.batch * s.kv_heads * s.kv_len * s.head_dim);
  tensors["v"] = draw(s.batch * s.kv_heads * s.kv_len * s.head_dim);
  if (mask_kind == v1::ATTENTION_MASK_TENSOR) {
    tensors["mask"] = draw(s.batch * s.q_heads * s.q_len * s.kv_len);
    // One hidden key per row, and one row of query 0 hiding all.
    for (size_t r = 0; r < tensors["mask"].size() / s.kv_len; ++r) {
      tensors["mask"][r * s.kv_len + r % s.kv_len] = -INFINITY;
    }
    for (int64_t j = 0; j < s.kv_len; ++j) tensors["mask"][j] = -INFINITY;
  }
  const bool bhsd = layout == v1::SEQUENCE_LAYOUT_BHSD;
  const auto index = [&](int64_t b, int64_t h, int64_t i, int64_t heads, int64_t len) {
    return ((bhsd ? (b * heads + h) * len + i : (b * len + i) * heads + h)) * s.head_dim;
  };
  const int64_t rows = s.batch * s.q_len * s.q_heads;
  std::vector<int64_t> all(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) all[static_cast<size_t>(r)] = r;
  std::vector<double> got(static_cast<size_t>(rows * s.head_dim));
  spec.attention_reference({key, tensors, ints, floats}, all, got.data());

  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.q_heads; ++h) {
      const int64_t g = h / (s.q_heads / s.kv_heads);
      for (int64_t i = 0; i < s.q_len; ++i) {
        std::vector<double> p(static_cast<size_t>(s.kv_len));
        double sum = 0;
        for (int64_t j = 0; j < s.kv_len; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < s.head_dim; ++c) {
            dot += double{tensors["q"][index(b, h, i, s.q_heads, s.q_len) + c]} *
                   tensors["k"][index(b, g, j, s.kv_heads, s.kv_len) + c];
          }
          double score = kValidationScale * dot;
          if (mask_kind == v1::ATTENTION_MASK_CAUSAL && j > i + s.kv_len - s.q_len)
            score = -INFINITY;
          if (mask_kind == v1::ATTENTION_MASK_TENSOR) {
            score += tensors["mask"][((b * s.q_heads + h) * s.q_len + i) * s.kv_len + j];
          }
          sum += p[j] = std::exp(score);
        }
        for (int64_t c = 0; c < s.head_dim; ++c) {
          double want = 0;
          for (int64_t j = 0; j < s.kv_len; ++j) {
            want += p[j] * tensors["v"][index(b, g, j, s.kv_heads, s.kv_len) + c];
          }
          want = sum > 0 ? want / sum : 0;
          EXPECT_NEAR(got[index(b, h, i, s.q_heads, s.q_len) + c], want, 1e-12)
              << "b=" << b << " h=" << h << " i=" << i << " c=" << c;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    MasksAndLayouts, AttentionReferenceTest,
    ::testing::Combine(::testing::Values(v1::ATTENTION_MASK_NONE, v1::ATTENTION_MASK_CAUSAL,
                                         v1::ATTENTION_MASK_TENSOR),
                       ::testing::Values(v1::SEQUENCE_LAYOUT_BSHD, v1::SEQUENCE_LAYOUT_BHSD)));

}  // namespace
}  // namespace tiletune::kernels::attention
