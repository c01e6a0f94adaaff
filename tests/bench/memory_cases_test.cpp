// The fusion benchmark's cases plan as the benchmark assumes, and every
// kernel in them has a CUDA template, so a GPU run cannot fail on a key.
#include "bench/gpu/fusion/memory_cases.h"

#include <gtest/gtest.h>

#include "kernels/core/kernel_key.h"
#include "kernels/core/kernel_template.h"

namespace tiletune::bench {
namespace {

TEST(MemoryCases, FusedCasesAreOneKernelAndTheirUnfusedSequencesOneKernelPerOp) {
  const auto cases = MemoryCases();
  ASSERT_EQ(cases.size(), 13u);
  EXPECT_EQ(cases[0].fused.at(0).op(), "elementwise");
  EXPECT_EQ(cases[0].fused.at(0).chain_size(), 0);
  EXPECT_EQ(cases[0].bytes, 2 * 16384 * 4096 * 4LL);
  for (const auto& c : cases) {
    EXPECT_EQ(c.fused.size(), 1u) << c.name;
    for (const auto* keys : {&c.fused, &c.unfused}) {
      for (const auto& key : *keys) {
        EXPECT_FALSE(kernels::ValidateKernelKey(key, {})) << c.name;
        std::string why;
        EXPECT_NE(kernels::FindKernelTemplate(key, "cuda", &why), nullptr) << c.name << ": " << why;
      }
    }
  }
  const MemoryCase& residual_norm = cases[5];
  EXPECT_EQ(residual_norm.fused[0].op(), "rmsnorm");
  EXPECT_EQ(residual_norm.fused[0].prologue_size(), 1);
  ASSERT_EQ(residual_norm.unfused.size(), 2u);
  EXPECT_EQ(residual_norm.unfused[0].op(), "elementwise");
  EXPECT_EQ(residual_norm.unfused[1].prologue_size(), 0);
  // x, residual and y of 16384 x 4096, and the weight row.
  EXPECT_EQ(residual_norm.bytes, (3 * 16384 * 4096LL + 4096) * 4);
  EXPECT_EQ(cases[6].unfused.size(), 3u);

  // The bf16 cases read and write bf16, their tensors too, and move half the bytes.
  for (const auto& c : cases) {
    if (c.name.rfind("bf16 ", 0) != 0) continue;
    for (const auto& key : c.fused) {
      EXPECT_EQ(key.input_dtype(), v1::DTYPE_BF16) << c.name;
      EXPECT_EQ(kernels::NormalizeKernelKey(key).output_dtype(), v1::DTYPE_BF16) << c.name;
    }
  }
  EXPECT_EQ(cases[9].fused[0].prologue_size(), 1);
  EXPECT_EQ(cases[9].bytes, residual_norm.bytes / 2);
  EXPECT_EQ(cases[12].fused[0].op(), "layernorm");
  EXPECT_EQ(cases[12].bytes, cases[3].bytes / 2);
}

// The residual stream: fused, one norm kernel writes the sum too; unfused,
// an add kernel writes it and the norm reads it back.
TEST(MemoryCases, ResidualStreamFusesIntoOneKernelThatWritesTheSum) {
  const auto cases = MemoryCases();
  for (size_t i : {10, 11}) {
    const MemoryCase& c = cases.at(i);
    ASSERT_EQ(c.fused.size(), 1u) << c.name;
    EXPECT_EQ(c.fused[0].op(), "rmsnorm") << c.name;
    EXPECT_TRUE(c.fused[0].write_prologue_output()) << c.name;
    ASSERT_EQ(c.unfused.size(), 2u) << c.name;
    EXPECT_EQ(c.unfused[0].op(), "elementwise") << c.name;
    EXPECT_EQ(c.unfused[0].chain(0).op(), "residual_add") << c.name;
    EXPECT_EQ(c.unfused[1].op(), "rmsnorm") << c.name;
    EXPECT_EQ(c.unfused[1].prologue_size(), 0) << c.name;
  }
  // x, residual, the sum and y of 16384 x 4096, and the weight row.
  EXPECT_EQ(cases[10].bytes, (4 * 16384 * 4096LL + 4096) * 4);
  EXPECT_EQ(cases[11].bytes, cases[10].bytes / 2);
  EXPECT_EQ(cases[11].fused[0].input_dtype(), v1::DTYPE_BF16);
}

}  // namespace
}  // namespace tiletune::bench
