#include "tests/support/test_key.h"

namespace tiletune::testing {

v1::KernelKey TestKey(const std::string& op,
                      const std::vector<std::pair<std::string, int64_t>>& dims,
                      const std::vector<std::string>& chain, v1::DType dtype) {
  v1::KernelKey key;
  key.set_op(op);
  key.set_input_dtype(dtype);
  for (const auto& [name, size] : dims) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  for (const auto& name : chain) {
    auto* c = key.add_chain();
    c->set_op(name);
    if (name == "cast") c->set_dtype(v1::DTYPE_F32);
  }
  return key;
}

v1::KernelKey RowsTestKey(const std::string& op, int64_t rows, int64_t cols, v1::DType dtype) {
  return TestKey(op, {{"rows", rows}, {"cols", cols}}, {}, dtype);
}

v1::KernelKey GemmShapeKey(int64_t m, int64_t n, int64_t k, v1::DType dtype) {
  return TestKey("gemm", {{"m", m}, {"n", n}, {"k", k}}, {}, dtype);
}

}  // namespace tiletune::testing
