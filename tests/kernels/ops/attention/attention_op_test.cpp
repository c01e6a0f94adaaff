#include "kernels/ops/attention/attention_op.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "kernels/core/abi_description.h"
#include "kernels/core/kernel_key.h"
#include "kernels/core/kernel_template.h"
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
  std::vector<double> got_lse(static_cast<size_t>(rows));
  spec.attention_reference({key, tensors, ints, floats}, all, got.data(), got_lse.data());
  // Row r's lse sits at the element the op's row values say: [b][h][i].
  key.set_write_lse(true);
  ASSERT_TRUE(spec.row_values && spec.row_values->written(key));
  std::vector<double> lse(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    lse[static_cast<size_t>(spec.row_values->element({key, tensors, ints, floats}, r))] =
        got_lse[static_cast<size_t>(r)];
  }

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
        const double got_row_lse = lse[static_cast<size_t>((b * s.q_heads + h) * s.q_len + i)];
        if (sum > 0) {
          EXPECT_NEAR(got_row_lse, std::log(sum), 1e-12) << "b=" << b << " h=" << h << " i=" << i;
        } else {
          EXPECT_EQ(got_row_lse, -INFINITY) << "b=" << b << " h=" << h << " i=" << i;
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

// What a launcher is served: the stored shapes in the key's layout, the
// dense strides as fixed values, the scale as a runtime float, and the mask
// and lse as tensors it may leave null.
TEST(AttentionKey, TheServedAbiGivesStoredShapesStridesAndOptionalTensors) {
  v1::KernelKey key = Key({2, 8, 2, 5, 7, 64}, v1::ATTENTION_MASK_CAUSAL, v1::SEQUENCE_LAYOUT_BHSD);
  key.set_input_dtype(v1::DTYPE_BF16);
  const v1::KernelAbi abi = DescribeLaunchAbi(key, v1::KernelAbi::PASSING_BY_VALUE);
  std::map<std::string, const v1::AbiField*> fields;
  for (const auto& f : abi.fields()) fields[f.name()] = &f;
  EXPECT_EQ(std::vector<int64_t>(fields["q"]->shape().begin(), fields["q"]->shape().end()),
            (std::vector<int64_t>{2, 8, 5, 64}));
  EXPECT_EQ(std::vector<int64_t>(fields["k"]->shape().begin(), fields["k"]->shape().end()),
            (std::vector<int64_t>{2, 2, 7, 64}));
  EXPECT_EQ(fields["q_seq_stride"]->value(), 64);
  EXPECT_EQ(fields["q_head_stride"]->value(), 5 * 64);
  EXPECT_EQ(fields["k_batch_stride"]->value(), 2 * 7 * 64);
  EXPECT_EQ(fields["mask_q_stride"]->value(), 0);
  EXPECT_FLOAT_EQ(fields["scale"]->default_value(), 0.125f);
  EXPECT_TRUE(fields["mask"]->may_be_null());
  EXPECT_TRUE(fields["lse"]->may_be_null());
  EXPECT_FALSE(fields["o"]->may_be_null());
}

const KernelTemplate& Template(std::string_view backend) {
  for (const auto& t : AllKernelTemplates()) {
    if (t->backend() == backend &&
        t->name() == (backend == "host" ? "host_attention_online" : "gpu_attention_flash")) {
      return *t;
    }
  }
  throw std::logic_error("no attention template for " + std::string(backend));
}

TEST(AttentionTemplates, SayWhyTheyCannotServeAKey) {
  v1::KernelKey key = Key({1, 8, 2, 128, 128, 128});
  key.set_input_dtype(v1::DTYPE_BF16);
  EXPECT_FALSE(Template("cuda").Unsupported(key));
  EXPECT_EQ(*Template("host").Unsupported(key), "host kernels take f32 inputs, not bf16");
  key.set_input_dtype(v1::DTYPE_F32);
  EXPECT_FALSE(Template("host").Unsupported(key));
  EXPECT_EQ(*Template("cuda").Unsupported(key),
            "gpu_attention_flash takes bf16 or f16 inputs (the tensor cores' operands), not f32");
  key.set_input_dtype(v1::DTYPE_BF16);
  // The mask tensor and lse are the flash kernel's too.
  key.set_attention_mask(v1::ATTENTION_MASK_TENSOR);
  key.set_write_lse(true);
  EXPECT_FALSE(Template("cuda").Unsupported(key));
  EXPECT_FALSE(Template("hip").Unsupported(key));
  // Every head dim: at 256 on 32 lanes O takes 128 registers a lane, and
  // Q is read from shared memory each key tile instead of held.
  key = Key({1, 8, 2, 128, 128, 256});
  key.set_input_dtype(v1::DTYPE_BF16);
  EXPECT_FALSE(Template("cuda").Unsupported(key));
  EXPECT_FALSE(Template("hip").Unsupported(key));
  const auto variants = Template("cuda").Space(key, kernels::kH200).ValidVariants();
  ASSERT_FALSE(variants.empty());
  for (const Variant& v : variants) {
    EXPECT_EQ(v.at("block_q") / v.at("warps"), 16) << VariantString(v);
    EXPECT_EQ(v.at("block_kv"), 32) << VariantString(v);
  }
  EXPECT_NE(Template("cuda").Source(key, variants[0]).code.find("q_in_registers = false"),
            std::string::npos);
}

TEST(AttentionTemplates, SpacesArePrunedByRegistersSharedMemoryAndLengths) {
  v1::KernelKey key = Key({1, 8, 2, 4096, 4096, 128});
  key.set_input_dtype(v1::DTYPE_BF16);
  const auto variants = Template("cuda").Space(key).ValidVariants();
  ASSERT_FALSE(variants.empty());
  for (const Variant& v : variants) {
    const int64_t tm = v.at("block_q") / v.at("warps");
    EXPECT_TRUE(tm == 16 || tm == 32);
    // O, S, Q and P of 32 rows of 128 never fit a lane's registers.
    EXPECT_EQ(tm, 16);
    EXPECT_LE(v.at("block_kv"), 64);
  }
  // A decode query takes the smallest block of queries of 128+ threads (64
  // on 32 lanes, 32 on 64), and 40 keys no 128-key tile.
  key = Key({1, 8, 2, 1, 40, 64});
  key.set_input_dtype(v1::DTYPE_F16);
  for (const Variant& v : Template("cuda").Space(key).ValidVariants()) {
    EXPECT_EQ(v.at("block_q"), 64);
    EXPECT_LE(v.at("block_kv"), 64);
  }
  const auto cdna = Template("hip").Space(key).ValidVariants();
  ASSERT_FALSE(cdna.empty());
  for (const Variant& v : cdna) EXPECT_EQ(v.at("block_q"), 32) << VariantString(v);
  // 64 KiB of LDS on gfx90a: three stages of 128-key tiles of 128 do not fit.
  key = Key({1, 8, 2, 4096, 4096, 128});
  key.set_input_dtype(v1::DTYPE_BF16);
  for (const Variant& v : Template("hip").Space(key).ValidVariants()) {
    EXPECT_LE(v.at("block_q") * 128 * 2 + 2 * v.at("stages") * v.at("block_kv") * 128 * 2,
              64 * 1024);
  }
}

// gfx950's 160 KiB of LDS admits 128x128 tiles of 128; on 8 waves a lane
// has 256 registers, too few for them beside the key tile's operands that
// LLVM reads ahead (they spilled 54), on 4 waves 512.
TEST(AttentionTemplates, CdnaSpacesFollowTheRegistersOfTheBlocksWaves) {
  v1::KernelKey key = Key({2, 8, 2, 4096, 4096, 128});
  key.set_input_dtype(v1::DTYPE_BF16);
  key.set_attention_mask(v1::ATTENTION_MASK_CAUSAL);
  bool four_waves = false;
  for (const Variant& v : Template("hip").Space(key, kMi355x).ValidVariants()) {
    const bool largest = v.at("block_q") == 128 && v.at("block_kv") == 128;
    EXPECT_FALSE(largest && v.at("warps") == 8) << VariantString(v);
    four_waves = four_waves || (largest && v.at("warps") == 4);
  }
  EXPECT_TRUE(four_waves);
}

TEST(AttentionTemplates, TheGpuSourceLaunchesOneBlockPerQueryTileHeadAndBatchEntry) {
  v1::KernelKey key = Key({3, 8, 2, 77, 131, 128}, v1::ATTENTION_MASK_CAUSAL);
  key.set_input_dtype(v1::DTYPE_BF16);
  const KernelSource source = Template("cuda").Source(
      key, {{"block_q", 64}, {"block_kv", 32}, {"warps", 4}, {"stages", 2}});
  EXPECT_EQ(source.launch.grid(0), 2);
  EXPECT_EQ(source.launch.grid(1), 8);
  EXPECT_EQ(source.launch.grid(2), 3);
  EXPECT_EQ(source.launch.block(0), 128);
  // Q (64 x 128) and two stages of K and V (32 x 128), bf16.
  EXPECT_EQ(source.launch.shared_memory_bytes(), 64 * 128 * 2 + 2 * 2 * 32 * 128 * 2);
  EXPECT_NE(source.code.find("static constexpr bool causal = true;"), std::string::npos)
      << source.code;
  EXPECT_NE(source.code.find("tt::attention::flash_attention<Config>"), std::string::npos);
}

}  // namespace
}  // namespace tiletune::kernels::attention
