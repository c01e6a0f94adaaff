#include "client/key_text.h"

#include <string>

#include <gtest/gtest.h>

#include "client/input_error.h"

namespace tiletune::client {
namespace {

template <typename Parse>
std::string ErrorOf(Parse parse) {
  try {
    parse();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(KeyTextTest, NamesComeFromTheProtoEnums) {
  EXPECT_EQ(ParseDTypeName("bf16"), v1::DTYPE_BF16);
  EXPECT_EQ(ParseDTypeName("f64"), v1::DTYPE_F64);
  EXPECT_EQ(ParseDTypeName("F32"), std::nullopt);
  EXPECT_EQ(ParseDTypeName("unspecified"), std::nullopt);
  EXPECT_EQ(ParseLayoutName("col"), v1::LAYOUT_COL_MAJOR);
  EXPECT_EQ(ParseLayoutName("col_major"), std::nullopt);
  EXPECT_EQ(ShortEnumNameList(kDTypeNaming), "f32, f16, bf16, f64");
  EXPECT_EQ(ShortEnumName(kLayoutNaming, v1::LAYOUT_ROW_MAJOR), "row");
}

TEST(KeyTextTest, NumbersMustBeTheWholeText) {
  EXPECT_EQ(ParseInteger("128"), 128);
  EXPECT_EQ(ParseInteger("-3"), -3);
  for (const char* bad : {"", "12x", "+1", " 1", "1.0", "0x10", "99999999999999999999"}) {
    EXPECT_EQ(ParseInteger(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(ParseNumber("0.5"), 0.5);
  EXPECT_EQ(ParseNumber("1e-3"), 1e-3);
  for (const char* bad : {"", "inf", "nan", "0.5s", "fast"}) {
    EXPECT_EQ(ParseNumber(bad), std::nullopt) << bad;
  }
}

TEST(KeyTextTest, ShapeTextKeepsOrder) {
  auto dims = ParseShapeText("m=128,n=256,k=64", "--shape");
  ASSERT_EQ(dims.size(), 3u);
  EXPECT_EQ(dims[0].name(), "m");
  EXPECT_EQ(dims[0].size(), 128);
  EXPECT_EQ(dims[2].name(), "k");
  EXPECT_EQ(dims[2].size(), 64);
}

TEST(KeyTextTest, BadShapeTextNamesTheFlagAndThePart) {
  EXPECT_EQ(ErrorOf([] { ParseShapeText("m=128,n", "--shape"); }), "--shape: 'n' is not NAME=SIZE");
  EXPECT_EQ(ErrorOf([] { ParseShapeText("m=12x", "--shape"); }),
            "--shape: m: '12x' is not an integer");
  EXPECT_EQ(ErrorOf([] { ParseShapeText("m=1,m=2", "--shape"); }), "--shape: 'm' is given twice");
  EXPECT_EQ(ErrorOf([] { ParseShapeText("m=1,,k=2", "--shape"); }), "--shape: '' is not NAME=SIZE");
  EXPECT_EQ(ErrorOf([] { ParseShapeText("", "--shape"); }), "--shape: is empty");
}

TEST(KeyTextTest, LayoutText) {
  auto layouts = ParseLayoutsText("a=row,b=col", "--layout");
  ASSERT_EQ(layouts.size(), 2u);
  EXPECT_EQ(layouts[1].tensor(), "b");
  EXPECT_EQ(layouts[1].layout(), v1::LAYOUT_COL_MAJOR);
  EXPECT_EQ(ErrorOf([] { ParseLayoutsText("a=rows", "--layout"); }),
            "--layout: a: unknown layout 'rows' (known: row, col)");
}

TEST(KeyTextTest, ChainTextSetsScalarsAndDtypes) {
  auto chain = ParseChainText("bias,gelu_tanh,scale=0.5,residual_add,cast=bf16", "--chain");
  ASSERT_EQ(chain.size(), 5u);
  EXPECT_EQ(chain[0].op(), "bias");
  EXPECT_EQ(chain[2].op(), "scale");
  EXPECT_DOUBLE_EQ(chain[2].scalar(), 0.5);
  EXPECT_EQ(chain[2].dtype(), v1::DTYPE_UNSPECIFIED);
  EXPECT_EQ(chain[4].op(), "cast");
  EXPECT_EQ(chain[4].dtype(), v1::DTYPE_BF16);
}

TEST(KeyTextTest, BadChainTextNamesTheEntry) {
  EXPECT_EQ(ErrorOf([] { ParseChainText("bias,Gelu", "--chain"); }),
            "--chain: 'Gelu' is not an op name (lower-case letters, digits, _)");
  EXPECT_EQ(ErrorOf([] { ParseChainText("bias,", "--chain"); }),
            "--chain: '' is not an op name (lower-case letters, digits, _)");
  EXPECT_EQ(ErrorOf([] { ParseChainText("scale=", "--chain"); }),
            "--chain: 'scale=': '' is neither a number nor a dtype (f32, f16, bf16, f64)");
}

TEST(KeyTextTest, KeyTextReadsLikeTheFlags) {
  v1::KernelKey key;
  key.set_op("gemm");
  key.set_input_dtype(v1::DTYPE_F32);
  key.set_output_dtype(v1::DTYPE_BF16);
  for (auto& d : ParseShapeText("m=128,n=256,k=64", "--shape")) *key.add_shape() = d;
  for (auto& l : ParseLayoutsText("a=row,b=col", "--layout")) *key.add_layouts() = l;
  for (auto& c : ParseChainText("bias,scale=0.5,cast=bf16", "--chain")) *key.add_chain() = c;
  EXPECT_EQ(KeyText(key),
            "gemm f32->bf16 m=128,n=256,k=64 a=row,b=col chain=bias,scale=0.5,cast=bf16");
}

TEST(KeyTextTest, KeyTextSaysWhenTf32IsAllowed) {
  v1::KernelKey key;
  key.set_op("gemm");
  key.set_input_dtype(v1::DTYPE_F32);
  key.set_allow_tf32(true);
  for (auto& d : ParseShapeText("m=8,n=8,k=8", "--shape")) *key.add_shape() = d;
  EXPECT_EQ(KeyText(key), "gemm f32 tf32 m=8,n=8,k=8");
}

}  // namespace
}  // namespace tiletune::client
