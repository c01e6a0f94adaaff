#include "kernels/source/epilogue_source.h"

namespace tiletune::kernels {
namespace {

// The functor of one chain op; `index` is the op's slot in the kernel's chain
// arguments (prologue ops first, then the epilogue chain).
std::string ChainStep(const v1::ChainOp& op, int index) {
  const std::string i = std::to_string(index);
  if (op.op() == "bias") return "tt::bias{args->chain.tensors[" + i + "]}";
  if (op.op() == "residual_add") return "tt::residual_add{args->chain.tensors[" + i + "]}";
  if (op.op() == "scale") return "tt::scale{args->chain.scalars[" + i + "]}";
  if (op.op() == "cast") return "tt::cast_f32{}";
  return "tt::" + op.op() + "{}";
}

// `struct <name>` mapping (v, idx, col) through `ops` in order.
std::string ChainFunctor(const std::string& name,
                         const google::protobuf::RepeatedPtrField<v1::ChainOp>& ops,
                         int first_index, const EpilogueDialect& dialect, bool plant_wrong_result) {
  std::string s = "struct " + name + " {\n  static constexpr bool empty = " +
                  (ops.empty() && !plant_wrong_result ? "true" : "false") + ";\n  const " +
                  dialect.args_type + "* args;\n  " + dialect.qualifier +
                  "float operator()(float v, " + dialect.index_type + " idx, " +
                  dialect.index_type + " col) const {\n";
  for (int i = 0; i < ops.size(); ++i) {
    s += "    v = " + ChainStep(ops[i], first_index + i) + "(v, idx, col);  // " + ops[i].op() +
         "\n";
  }
  if (plant_wrong_result) s += "    v += 1.0f;  // planted fault: a wrong result\n";
  s += "    (void)idx;\n    (void)col;\n    return v;\n  }\n};\n";
  return s;
}

}  // namespace

std::string EpilogueFunctor(const v1::KernelKey& key, const EpilogueDialect& dialect,
                            bool plant_wrong_result) {
  return ChainFunctor("Epilogue", key.chain(), key.prologue_size(), dialect, plant_wrong_result);
}

std::string PrologueFunctor(const v1::KernelKey& key, const EpilogueDialect& dialect) {
  return ChainFunctor("Prologue", key.prologue(), 0, dialect, false);
}

}  // namespace tiletune::kernels
