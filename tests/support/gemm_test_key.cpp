#include "tests/support/gemm_test_key.h"

#include <string>
#include <utility>

#include "kernels/core/kernel_key.h"

namespace tiletune::testing {

v1::KernelKey GemmTestKey(int64_t m, int64_t n, int64_t k, int64_t batch, v1::DType in,
                          v1::DType out, bool a_col_major, bool b_col_major,
                          const std::vector<TestChainOp>& chain) {
  v1::KernelKey key;
  key.set_op("gemm");
  key.set_input_dtype(in);
  key.set_output_dtype(out);
  for (const auto& [name, size] :
       {std::pair<const char*, int64_t>{"m", m}, {"n", n}, {"k", k}, {"batch", batch}}) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  for (const auto& [tensor, col_major] :
       {std::pair<const char*, bool>{"a", a_col_major}, {"b", b_col_major}}) {
    auto* l = key.add_layouts();
    l->set_tensor(tensor);
    l->set_layout(col_major ? v1::LAYOUT_COL_MAJOR : v1::LAYOUT_ROW_MAJOR);
  }
  for (const TestChainOp& step : chain) {
    auto* c = key.add_chain();
    c->set_op(step.op);
    const bool cast = std::string(step.op) == "cast";
    c->set_dtype(cast && step.dtype == v1::DTYPE_UNSPECIFIED ? out : step.dtype);
    if (std::string(step.op) == "scale") c->set_scalar(kTestScale);
  }
  return kernels::NormalizeKernelKey(key);
}

v1::KernelKey AllowingTf32(v1::KernelKey key) {
  key.set_allow_tf32(true);
  return key;
}

v1::KernelKey GatedBySwiglu(v1::KernelKey key) {
  key.set_gate(v1::GATE_SWIGLU);
  return key;
}

}  // namespace tiletune::testing
