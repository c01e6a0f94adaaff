#include "epilogue_source.h"

namespace tiletune::kernels {
namespace {

// The functor of one chain op, built from its runtime argument.
std::string EpilogueStep(const v1::ChainOp& op, int index) {
  const std::string i = std::to_string(index);
  if (op.op() == "bias") return "tt::bias{args->chain_tensors[" + i + "]}";
  if (op.op() == "residual_add") return "tt::residual_add{args->chain_tensors[" + i + "]}";
  if (op.op() == "scale") return "tt::scale{args->chain_scalars[" + i + "]}";
  if (op.op() == "cast") return "tt::cast_f32{}";
  return "tt::" + op.op() + "{}";
}

}  // namespace

std::string EpilogueFunctor(const v1::KernelKey& key, const EpilogueDialect& dialect,
                            bool plant_wrong_result) {
  std::string s = "struct Epilogue {\n  const " + dialect.args_type + "* args;\n  " +
                  dialect.qualifier + "float operator()(float v, " + dialect.index_type + " idx, " +
                  dialect.index_type + " col) const {\n";
  for (int i = 0; i < key.chain_size(); ++i) {
    s += "    v = " + EpilogueStep(key.chain(i), i) + "(v, idx, col);  // " + key.chain(i).op() +
         "\n";
  }
  if (plant_wrong_result) s += "    v += 1.0f;  // planted fault: a wrong result\n";
  s += "    (void)idx;\n    (void)col;\n    return v;\n  }\n};\n";
  return s;
}

}  // namespace tiletune::kernels
