#include "bench/gpu/fusion/memory_cases.h"

#include <algorithm>

#include "kernels/core/kernel_key.h"
#include "kernels/fusion/fusion_planner.h"

namespace tiletune::bench {
namespace {

constexpr int64_t kF32Bytes = 4;

int64_t ElementBytes(v1::DType dtype) {
  return dtype == v1::DTYPE_F32 ? kF32Bytes : 2;
}

// A row-op graph over [rows, cols] tensors of one dtype; `vectors` are [cols].
class RowGraph {
 public:
  RowGraph(int64_t rows, int64_t cols, v1::DType dtype = v1::DTYPE_F32) : dtype_(dtype) {
    for (auto [name, size] : {std::pair{"r", rows}, {"c", cols}}) {
      auto* d = key_.add_shape();
      d->set_name(name);
      d->set_size(size);
    }
  }
  RowGraph& Matrix(const std::string& name) { return Tensor(name, {"r", "c"}); }
  RowGraph& Vector(const std::string& name) { return Tensor(name, {"c"}); }
  RowGraph& Op(const std::string& op, std::vector<std::string> inputs, const std::string& output,
               double scalar = 0) {
    auto* o = key_.add_ops();
    o->set_op(op);
    for (auto& i : inputs) o->add_inputs(i);
    o->set_output(output);
    o->set_scalar(scalar);
    return *this;
  }

  // A wanted intermediate [rows, cols] (with the last op's output, which must
  // then be listed too).
  RowGraph& Output(const std::string& name) {
    key_.add_outputs(name);
    return *this;
  }

  // Inputs read once and each output written once.
  int64_t Bytes() const {
    int64_t elements = Elements({"r", "c"}) * std::max(1, key_.outputs_size());
    for (const auto& t : key_.tensors()) {
      elements += Elements(std::vector<std::string>(t.dims().begin(), t.dims().end()));
    }
    return elements * ElementBytes(dtype_);
  }

  std::vector<v1::KernelKey> Fused() const { return Plan(key_); }

  // Each op its own kernel: every intermediate wanted, and a row op's
  // prologue (which would write the wanted sum itself) split off into an
  // element-wise kernel before it.
  std::vector<v1::KernelKey> Unfused() const {
    v1::KernelKey all = key_;
    all.clear_outputs();
    for (const auto& op : key_.ops()) all.add_outputs(op.output());
    std::vector<v1::KernelKey> keys;
    for (v1::KernelKey key : Plan(all)) {
      if (key.prologue_size() > 0) {
        v1::KernelKey prologue = key;
        prologue.set_op("elementwise");
        *prologue.mutable_chain() = key.prologue();
        prologue.clear_prologue();
        prologue.set_write_prologue_output(false);
        prologue.set_output_dtype(key.input_dtype());
        keys.push_back(kernels::NormalizeKernelKey(prologue));
        key.clear_prologue();
        key.set_write_prologue_output(false);
      }
      keys.push_back(key);
    }
    return keys;
  }

 private:
  RowGraph& Tensor(const std::string& name, std::vector<std::string> dims) {
    auto* t = key_.add_tensors();
    t->set_name(name);
    for (auto& d : dims) t->add_dims(d);
    t->set_dtype(dtype_);
    return *this;
  }

  int64_t Elements(const std::vector<std::string>& dims) const {
    int64_t n = 1;
    for (const auto& name : dims) {
      for (const auto& d : key_.shape()) {
        if (d.name() == name) n *= d.size();
      }
    }
    return n;
  }

  static std::vector<v1::KernelKey> Plan(const v1::KernelKey& graph) {
    std::vector<v1::KernelKey> keys;
    const v1::FusionPlan plan = kernels::fusion::PlanFusion(graph, {});
    for (const auto& k : plan.kernels()) keys.push_back(k.key());
    return keys;
  }

  v1::DType dtype_;
  v1::KernelKey key_;
};

MemoryCase Single(const std::string& name, const RowGraph& graph) {
  return {name, graph.Fused(), {}, graph.Bytes()};
}

MemoryCase Fusion(const std::string& name, const RowGraph& graph) {
  return {name, graph.Fused(), graph.Unfused(), graph.Bytes()};
}

// A transformer block's residual stream: h = x + res is the next block's
// input and the norm's; fused, one kernel writes both.
RowGraph ResidualStream(int64_t rows, int64_t cols, v1::DType dtype) {
  return RowGraph(rows, cols, dtype)
      .Matrix("x")
      .Matrix("res")
      .Vector("w")
      .Op("add", {"x", "res"}, "h")
      .Op("rmsnorm", {"h", "w"}, "y")
      .Output("h")
      .Output("y");
}

}  // namespace

std::vector<MemoryCase> MemoryCases() {
  constexpr int64_t kRows = 16384, kCols = 4096;
  constexpr v1::DType kBf16 = v1::DTYPE_BF16;
  v1::KernelKey copy;
  copy.set_op("elementwise");
  copy.set_input_dtype(v1::DTYPE_F32);
  for (auto [name, size] : {std::pair{"rows", kRows}, {"cols", kCols}}) {
    auto* d = copy.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  return {
      {"copy 16384x4096", {copy}, {}, 2 * kRows * kCols * kF32Bytes},
      Single("softmax 16384x4096", RowGraph(kRows, kCols).Matrix("x").Op("softmax", {"x"}, "y")),
      Single("softmax 4096x32768", RowGraph(4096, 32768).Matrix("x").Op("softmax", {"x"}, "y")),
      Single("layernorm 16384x4096", RowGraph(kRows, kCols)
                                         .Matrix("x")
                                         .Vector("g")
                                         .Vector("b")
                                         .Op("layernorm", {"x", "g", "b"}, "y")),
      Single("rmsnorm 16384x4096",
             RowGraph(kRows, kCols).Matrix("x").Vector("w").Op("rmsnorm", {"x", "w"}, "y")),
      Fusion("residual+rmsnorm 16384x4096", RowGraph(kRows, kCols)
                                                .Matrix("x")
                                                .Matrix("res")
                                                .Vector("w")
                                                .Op("add", {"x", "res"}, "h")
                                                .Op("rmsnorm", {"h", "w"}, "y")),
      Fusion("scale+mask+softmax 16384x4096", RowGraph(kRows, kCols)
                                                  .Matrix("x")
                                                  .Matrix("mask")
                                                  .Op("scale", {"x"}, "s", 0.125)
                                                  .Op("add", {"s", "mask"}, "m")
                                                  .Op("softmax", {"m"}, "y")),
      Single("bf16 softmax 16384x4096",
             RowGraph(kRows, kCols, kBf16).Matrix("x").Op("softmax", {"x"}, "y")),
      Single("bf16 rmsnorm 16384x4096",
             RowGraph(kRows, kCols, kBf16).Matrix("x").Vector("w").Op("rmsnorm", {"x", "w"}, "y")),
      Fusion("bf16 residual+rmsnorm 16384x4096", RowGraph(kRows, kCols, kBf16)
                                                     .Matrix("x")
                                                     .Matrix("res")
                                                     .Vector("w")
                                                     .Op("add", {"x", "res"}, "h")
                                                     .Op("rmsnorm", {"h", "w"}, "y")),
      Fusion("residual+rmsnorm, sum out 16384x4096", ResidualStream(kRows, kCols, v1::DTYPE_F32)),
      Fusion("bf16 residual+rmsnorm, sum out 16384x4096", ResidualStream(kRows, kCols, kBf16)),
      Single("bf16 layernorm 16384x4096", RowGraph(kRows, kCols, kBf16)
                                              .Matrix("x")
                                              .Vector("g")
                                              .Vector("b")
                                              .Op("layernorm", {"x", "g", "b"}, "y")),
  };
}

}  // namespace tiletune::bench
