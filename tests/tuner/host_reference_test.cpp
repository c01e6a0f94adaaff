#include "tuner/worker/host_reference.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/tuner/host_kernel_fixture.h"

namespace tiletune::tuner {
namespace {

using testing::MakeKey;

// A problem with hand-set inputs: shapes from the key, values replaced.
ProblemInputs Problem(const v1::KernelKey& key) {
  return MakeProblemInputs(key, 1);
}

TEST(HostReference, GemmWithBiasAndRelu) {
  ProblemInputs p = Problem(MakeKey("gemm", {{"m", 2}, {"n", 2}, {"k", 2}}, {"bias", "relu"}));
  p.tensors["a"] = {1, 2, 3, 4};   // [[1, 2], [3, 4]]
  p.tensors["b"] = {5, 6, 7, -8};  // [[5, 6], [7, -8]]
  p.chain_tensors[0] = {0.5f, 1.0f};
  // A*B = [[19, -10], [43, -14]]; + bias; relu.
  EXPECT_EQ(HostReference(p).values, (std::vector<double>{19.5, 0, 43.5, 0}));
}

TEST(HostReference, ColumnMajorOperandsReadTransposed) {
  v1::KernelKey key = MakeKey("gemm", {{"m", 2}, {"n", 2}, {"k", 2}});
  auto* l = key.add_layouts();
  l->set_tensor("a");
  l->set_layout(v1::LAYOUT_COL_MAJOR);
  ProblemInputs p = Problem(key);
  EXPECT_EQ(p.ints.at("lda"), 2);
  p.tensors["a"] = {1, 3, 2, 4};  // [[1, 2], [3, 4]] stored by columns
  p.tensors["b"] = {5, 6, 7, -8};
  EXPECT_EQ(HostReference(p).values, (std::vector<double>{19, -10, 43, -14}));
}

TEST(HostReference, BatchedGemmAndResidualAdd) {
  ProblemInputs p = Problem(
      MakeKey("gemm", {{"m", 1}, {"n", 1}, {"k", 2}, {"batch", 2}}, {"residual_add", "scale"}));
  p.tensors["a"] = {1, 2, 3, 4};
  p.tensors["b"] = {1, 1, 2, 3};
  p.chain_tensors[0] = {10, 20};
  // batch 0: 1+2 = 3; batch 1: 6+12 = 18; + residual; * 0.75.
  EXPECT_EQ(HostReference(p).values, (std::vector<double>{13 * 0.75, 38 * 0.75}));
}

TEST(HostReference, SoftmaxRowsSumToOne) {
  ProblemInputs p = Problem(MakeKey("softmax", {{"rows", 2}, {"cols", 3}}));
  p.tensors["x"] = {0, 0, 0, 1000, 0, 0};  // max subtraction keeps exp finite
  const auto y = HostReference(p).values;
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(y[i], 1.0 / 3);
  EXPECT_DOUBLE_EQ(y[3], 1.0);
  EXPECT_EQ(y[4], 0.0);
}

TEST(HostReference, Norms) {
  ProblemInputs rms = Problem(MakeKey("rmsnorm", {{"rows", 1}, {"cols", 2}}));
  rms.tensors["x"] = {3, 4};
  rms.tensors["w"] = {1, 2};
  rms.floats["eps"] = 0;
  const double r = std::sqrt(12.5);
  EXPECT_EQ(HostReference(rms).values, (std::vector<double>{3 / r, 8 / r}));

  ProblemInputs ln = Problem(MakeKey("layernorm", {{"rows", 1}, {"cols", 2}}));
  ln.tensors["x"] = {1, 3};
  ln.tensors["w"] = {1, 2};
  ln.tensors["b"] = {0.5f, 0};
  ln.floats["eps"] = 0;
  EXPECT_EQ(HostReference(ln).values, (std::vector<double>{-0.5, 2}));
}

TEST(HostReference, TheResidualSumIsTheNormsSecondOutput) {
  v1::KernelKey key = MakeKey("rmsnorm", {{"rows", 1}, {"cols", 2}});
  key.add_prologue()->set_op("residual_add");
  key.set_write_prologue_output(true);
  ProblemInputs p = Problem(key);
  p.tensors["x"] = {1, 2};
  p.chain_tensors[0] = {2, 2};
  p.tensors["w"] = {1, 1};
  p.floats["eps"] = 0;
  EXPECT_EQ(HostPrologueReference(p, AllOutputRows(p), 1).values, (std::vector<double>{3, 4}));
  const double r = std::sqrt(12.5);
  EXPECT_EQ(HostReference(p).values, (std::vector<double>{3 / r, 4 / r}));
}

TEST(HostReference, ActivationValues) {
  ProblemInputs p = Problem(MakeKey("softmax", {{"rows", 1}, {"cols", 1}}, {"gelu_tanh"}));
  p.tensors["x"] = {0.25f};  // softmax of one element is 1
  EXPECT_NEAR(HostReference(p).values[0], 0.8411919906, 1e-9);
  p.key.mutable_chain(0)->set_op("gelu_erf");
  EXPECT_NEAR(HostReference(p).values[0], 0.8413447461, 1e-9);
  p.key.mutable_chain(0)->set_op("silu");
  EXPECT_NEAR(HostReference(p).values[0], 0.7310585786, 1e-9);
}

// Rows of C computed by hand, one multiply-add at a time.
std::vector<double> NaiveGemmRow(const ProblemInputs& p, int64_t row, bool a_col, bool b_col) {
  const int64_t m = p.ints.at("m"), n = p.ints.at("n"), k = p.ints.at("k");
  const int64_t lda = p.ints.at("lda"), ldb = p.ints.at("ldb");
  const int64_t entry = row / m, i = row % m;
  const float* a = p.tensors.at("a").data() + entry * m * k;
  const float* b = p.tensors.at("b").data() + entry * k * n;
  std::vector<double> c(static_cast<size_t>(n), 0.0);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t q = 0; q < k; ++q) {
      c[j] += static_cast<double>(a_col ? a[q * lda + i] : a[i * lda + q]) *
              (b_col ? b[j * ldb + q] : b[q * ldb + j]);
    }
  }
  return c;
}

TEST(HostReference, GemmRowsOfEveryLayoutAcrossColumnBlocksAndBatches) {
  for (const bool a_col : {false, true}) {
    for (const bool b_col : {false, true}) {
      // n = 600 spans two of the row-major pass's 512-column blocks.
      v1::KernelKey key = MakeKey("gemm", {{"m", 11}, {"n", 600}, {"k", 7}, {"batch", 2}});
      for (const auto& [tensor, col] : {std::pair{"a", a_col}, std::pair{"b", b_col}}) {
        auto* l = key.add_layouts();
        l->set_tensor(tensor);
        l->set_layout(col ? v1::LAYOUT_COL_MAJOR : v1::LAYOUT_ROW_MAJOR);
      }
      const ProblemInputs p = Problem(key);
      const Reference ref = HostReference(p, 3);
      ASSERT_EQ(ref.rows.size(), 22u);
      EXPECT_FALSE(ref.sampled());
      for (const int64_t row : {0, 10, 11, 21}) {
        const std::vector<double> want = NaiveGemmRow(p, row, a_col, b_col);
        for (int64_t j = 0; j < p.cols; ++j) {
          ASSERT_NEAR(ref.values[row * p.cols + j], want[j], 1e-12)
              << "a_col " << a_col << " b_col " << b_col << " row " << row << " col " << j;
        }
      }
    }
  }
}

// A subset of rows, on any number of threads, is exactly those rows of the
// whole reference: prologue, op and chain see the row's own tensors.
TEST(HostReference, RowSubsetsEqualTheWholeReference) {
  v1::KernelKey softmax = MakeKey("softmax", {{"rows", 40}, {"cols", 33}}, {"residual_add"});
  auto* pre = softmax.add_prologue();
  pre->set_op("residual_add");
  const v1::KernelKey keys[] = {MakeKey("gemm", {{"m", 37}, {"n", 29}, {"k", 19}, {"batch", 2}},
                                        {"bias", "gelu_tanh", "residual_add", "scale"}),
                                softmax,
                                MakeKey("layernorm", {{"rows", 23}, {"cols", 9}}, {"silu"})};
  for (const v1::KernelKey& key : keys) {
    const ProblemInputs p = Problem(key);
    const Reference whole = HostReference(p);
    const std::vector<int64_t> rows = {0, 1, 9, 20, OutputRows(p) - 1};
    for (const int threads : {1, 2, 5}) {
      const Reference part = HostReference(p, rows, threads);
      EXPECT_TRUE(part.sampled());
      EXPECT_EQ(part.checked_elements(), 5 * p.cols);
      for (size_t r = 0; r < rows.size(); ++r) {
        for (int64_t c = 0; c < p.cols; ++c) {
          ASSERT_EQ(part.values[r * p.cols + c], whole.values[rows[r] * p.cols + c])
              << key.op() << " row " << rows[r] << " threads " << threads;
        }
      }
    }
  }
}

TEST(HostReference, RowsMustBeAscendingDistinctAndInRange) {
  const ProblemInputs p = Problem(MakeKey("softmax", {{"rows", 4}, {"cols", 3}}));
  EXPECT_THROW(HostReference(p, {2, 1}, 1), std::invalid_argument);
  EXPECT_THROW(HostReference(p, {1, 1}, 1), std::invalid_argument);
  EXPECT_THROW(HostReference(p, {4}, 1), std::invalid_argument);
  EXPECT_EQ(HostReference(p, {}, 2).values.size(), 0u);
}

TEST(ProblemInputs, DrawnFromTheSeedAwayFromZero) {
  const v1::KernelKey key = MakeKey("gemm", {{"m", 30}, {"n", 20}, {"k", 10}}, {"bias", "scale"});
  const ProblemInputs a = MakeProblemInputs(key, 5), b = MakeProblemInputs(key, 5),
                      c = MakeProblemInputs(key, 6);
  EXPECT_EQ(a.tensors, b.tensors);
  EXPECT_NE(a.tensors.at("a"), c.tensors.at("a"));
  EXPECT_EQ(a.tensors.at("a").size(), 300u);
  EXPECT_EQ(a.tensors.at("b").size(), 200u);
  EXPECT_EQ(
      a.ints,
      (kernels::NamedInts{
          {"m", 30}, {"n", 20}, {"k", 10}, {"batch", 1}, {"lda", 10}, {"ldb", 20}, {"ldc", 20}}));
  EXPECT_EQ(a.chain_tensors[0].size(), 20u);
  EXPECT_EQ(a.chain_scalars[1], 0.75);
  EXPECT_EQ(a.output_elements, 600);
  for (float v : a.tensors.at("a")) {
    EXPECT_LE(std::abs(v), 1.0f);
    EXPECT_GE(std::abs(v), 0x1p-10f);
  }
}

TEST(ProblemInputs, RowOpsGetTheirNamedTensorsAndFields) {
  const ProblemInputs p = MakeProblemInputs(MakeKey("layernorm", {{"rows", 3}, {"cols", 5}}), 1);
  EXPECT_EQ(p.tensors.at("x").size(), 15u);
  EXPECT_EQ(p.tensors.at("w").size(), 5u);
  EXPECT_EQ(p.tensors.at("b").size(), 5u);
  EXPECT_FALSE(p.tensors.contains("y"));
  EXPECT_EQ(p.ints, (kernels::NamedInts{{"rows", 3}, {"cols", 5}, {"ldx", 5}, {"ldy", 5}}));
  EXPECT_EQ(p.floats, (kernels::NamedFloats{{"eps", 1e-5}}));
  EXPECT_EQ(p.batch * p.rows * p.cols, p.output_elements);
}

TEST(ProblemInputs, ScaleWithoutAValueGetsADrawnOne) {
  v1::KernelKey key = MakeKey("rmsnorm", {{"rows", 2}, {"cols", 2}}, {"scale"});
  key.mutable_chain(0)->set_scalar(0);
  const double s = MakeProblemInputs(key, 1).chain_scalars[0];
  EXPECT_GE(s, 0.5);
  EXPECT_LE(s, 1.5);
}

TEST(ProblemInputs, RejectsWhatTheWorkerCannotDraw) {
  v1::KernelKey wide = MakeKey("softmax", {{"rows", 2}, {"cols", 2}});
  wide.set_output_dtype(v1::DTYPE_F64);
  EXPECT_THROW(MakeProblemInputs(wide, 1), std::invalid_argument);
  EXPECT_THROW(MakeProblemInputs(MakeKey("softmax", {{"rows", 2}}), 1), std::invalid_argument);
}

}  // namespace
}  // namespace tiletune::tuner
