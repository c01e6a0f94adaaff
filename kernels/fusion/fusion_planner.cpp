#include "kernels/fusion/fusion_planner.h"

#include <stdexcept>
#include <utility>

#include "kernels/core/op_registry.h"
#include "kernels/core/op_graph.h"

namespace tiletune::kernels::fusion {
namespace {

// The chain op an element-wise graph op becomes in a kernel key.
v1::ChainOp ChainOpOf(const ResolvedOp& op) {
  v1::ChainOp c;
  if (op.op == "add") {
    c.set_op(op.per_column ? "bias" : "residual_add");
    c.set_dtype(op.other_dtype);
  } else {
    c.set_op(op.op);
    if (op.op == "cast") c.set_dtype(op.output_dtype);
  }
  c.set_scalar(op.scalar);
  return c;
}

class Planner {
 public:
  explicit Planner(const KeyLimits& limits) : limits_(limits) {}

  v1::FusionPlan Plan(const ResolvedGraph& graph) {
    for (const ResolvedOp& op : graph.ops) {
      switch (op.kind) {
        case OpKind::kMatmul: StartMatmul(op); break;
        case OpKind::kRowReduction: StartRowReduction(op); break;
        case OpKind::kElementwise: AddElementwise(op); break;
        // Graphs spell attention as its matmuls, scale, mask and softmax.
        case OpKind::kAttention: throw std::logic_error("attention is no graph op");
      }
      open_->add_ops(op.index);
      const bool last = op.index + 1 == static_cast<int>(graph.ops.size());
      if (op.op == "cast" && !last) {
        Close("cast ends a kernel: its output is stored as " +
              std::string(DTypeName(op.output_dtype)) + " and the next op reads it back");
      } else if (op.output_wanted && !last &&
                 graph.ops[op.index + 1].kind == OpKind::kRowReduction) {
        // The row op that follows takes this output as its input: if it
        // takes these ops as its prologue, it writes the output as well (the
        // residual stream of add -> rmsnorm); otherwise this kernel ends
        // there anyway and writes it.
        prologue_output_wanted_ = true;
      } else if (op.output_wanted && !last) {
        Close("'" + op.output +
              "' is a graph output: this kernel writes it and the next "
              "kernel reads it back");
      }
    }
    if (open_) Close("");
    return plan_;
  }

 private:
  void StartMatmul(const ResolvedOp& op) {
    if (open_) {
      Close(
          "matmul starts a new kernel: the GEMM templates read A as stored, with no "
          "prologue");
    }
    Open(std::string(KernelOpFor(FusionKind::kMatmul).name), op);
    auto* key = open_->mutable_key();
    for (auto [name, size] : {std::pair{"m", op.rows}, {"n", op.cols}, {"k", op.k}}) {
      auto* d = key->add_shape();
      d->set_name(name);
      d->set_size(size);
    }
  }

  void StartRowReduction(const ResolvedOp& op) {
    if (open_ && OpSpecOf(open_->key().op()).fusion == FusionKind::kMatmul) {
      Close(op.op + " reduces whole rows of " + std::to_string(op.cols) +
            " columns; a GEMM block tile owns only some columns of a row, so the reduction "
            "runs as its own kernel");
    } else if (open_ && OpSpecOf(open_->key().op()).fusion != FusionKind::kElementwise) {
      Close("two row reductions in a row: " + op.op + " needs whole finished rows of " +
            open_->key().op() + "'s output");
    } else if (open_ && open_->key().chain_size() + 1 > limits_.max_chain_length) {
      Close("the prologue would exceed max_chain_length " +
            std::to_string(limits_.max_chain_length));
    }
    const bool write_prologue = std::exchange(prologue_output_wanted_, false);
    if (open_) {
      // The element-wise ops so far become the reduction's prologue.
      auto* key = open_->mutable_key();
      key->set_op(op.op);
      *key->mutable_prologue() = std::move(*key->mutable_chain());
      key->clear_chain();
      key->set_write_prologue_output(write_prologue);
      return;
    }
    Open(op.op, op);
    RowShape(op);
  }

  void AddElementwise(const ResolvedOp& op) {
    if (open_ &&
        open_->key().chain_size() + open_->key().prologue_size() + 1 > limits_.max_chain_length) {
      Close("one kernel holds at most max_chain_length " +
            std::to_string(limits_.max_chain_length) + " element-wise ops");
    }
    if (!open_) {
      Open(std::string(KernelOpFor(FusionKind::kElementwise).name), op);
      RowShape(op);
    }
    auto* key = open_->mutable_key();
    *key->add_chain() = ChainOpOf(op);
    key->set_output_dtype(op.output_dtype);
  }

  void Open(const std::string& kernel_op, const ResolvedOp& op) {
    open_ = plan_.add_kernels();
    auto* key = open_->mutable_key();
    key->set_op(kernel_op);
    key->set_input_dtype(op.input_dtype);
    key->set_output_dtype(op.input_dtype);
  }

  void RowShape(const ResolvedOp& op) {
    auto* key = open_->mutable_key();
    for (auto [name, size] : {std::pair{"rows", op.rows}, {"cols", op.cols}}) {
      auto* d = key->add_shape();
      d->set_name(name);
      d->set_size(size);
    }
  }

  void Close(std::string reason) {
    *open_->mutable_key() = NormalizeKernelKey(open_->key());
    open_->set_split_reason(std::move(reason));
    open_ = nullptr;
  }

  const KeyLimits& limits_;
  v1::FusionPlan plan_;
  v1::FusedKernel* open_ = nullptr;
  // The last op's output is a graph output and the next op is a row op.
  bool prologue_output_wanted_ = false;
};

}  // namespace

v1::FusionPlan PlanFusion(const v1::KernelKey& graph_key, const KeyLimits& limits) {
  if (auto e = ValidateKernelKey(graph_key, limits, "key")) {
    throw std::invalid_argument("invalid op graph: " + e->ToString());
  }
  if (!IsGraphKey(graph_key)) throw std::invalid_argument("key: not an op graph (ops is empty)");
  auto resolved = ResolveOpGraph(graph_key, limits, "key");
  return Planner(limits).Plan(std::get<ResolvedGraph>(resolved));
}

}  // namespace tiletune::kernels::fusion
