#include "kernels/fusion/fusion_planner.h"

#include <stdexcept>
#include <utility>
#include <variant>
#include <vector>

#include "kernels/core/op_graph.h"
#include "kernels/core/op_registry.h"

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
    for (size_t i = 0; i < graph.ops.size(); ++i) {
      std::string why_not_attention;
      if (graph.ops[i].op == "matmul_t") {
        auto attention = MatchAttention(graph, i);
        if (auto* last = std::get_if<size_t>(&attention)) {
          StartAttention(graph, i, *last);
          i = *last;
        } else if (auto* why = std::get_if<std::string>(&attention)) {
          why_not_attention = "not one attention kernel: " + *why;
        }
      }
      const ResolvedOp& op = graph.ops[i];
      const bool in_attention = open_ && open_->key().op() == AttentionName() &&
                                open_->ops(open_->ops_size() - 1) == op.index;
      if (!in_attention) {
        if (op.op == "causal_mask") {
          throw std::invalid_argument(
              "key.ops[" + std::to_string(op.index) +
              "]: causal_mask runs only inside attention (matmul_t -> [scale] -> causal_mask -> "
              "softmax -> matmul)" +
              (not_attention_.empty() ? "" : "; " + not_attention_));
        }
        if (op.op == "swiglu") {
          GateMatmul(graph, op);
        } else {
          switch (op.kind) {
            case OpKind::kMatmul: StartMatmul(op); break;
            case OpKind::kRowReduction: StartRowReduction(op); break;
            case OpKind::kElementwise: AddElementwise(op); break;
            // Graphs spell attention as its matmuls, scale, mask and softmax.
            case OpKind::kAttention: throw std::logic_error("attention is no graph op");
          }
        }
        open_->add_ops(op.index);
        // The matmul_t's kernel says why it did not become attention.
        if (!why_not_attention.empty()) not_attention_ = std::move(why_not_attention);
      }
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
  // ops[i..] as attention: matmul_t(q, k) -> [scale] -> [add(mask) |
  // causal_mask] -> softmax -> matmul(., v). The index of its last op;
  // why not, where the ops have that shape but the kernel cannot take
  // them; monostate where they are not attention-shaped at all.
  static std::string AttentionName() {
    return std::string(KernelOpFor(FusionKind::kAttention).name);
  }

  std::variant<std::monostate, std::string, size_t> MatchAttention(const ResolvedGraph& graph,
                                                                   size_t i) const {
    size_t at = i + 1;
    const auto is = [&](std::string_view name) {
      return at < graph.ops.size() && graph.ops[at].op == name;
    };
    const ResolvedOp& scores = graph.ops[i];
    std::vector<const ResolvedOp*> ops = {&scores};
    if (is("scale")) ops.push_back(&graph.ops[at++]);
    const ResolvedOp* mask = nullptr;
    if (is("add") || is("causal_mask")) ops.push_back(mask = &graph.ops[at++]);
    if (!is("softmax")) return std::monostate{};
    ops.push_back(&graph.ops[at++]);
    if (!is("matmul")) return std::monostate{};
    const ResolvedOp& pv = graph.ops[at];
    const int64_t head_dim = scores.k;
    for (const ResolvedOp* op : ops) {
      if (op->output_wanted) {
        return Quoted(op->output) + " is a graph output, and attention keeps " + op->op +
               "'s result in registers";
      }
    }
    if (head_dim != 64 && head_dim != 128 && head_dim != 256) {
      return "head_dim " + std::to_string(head_dim) + " is not 64, 128 or 256";
    }
    if (pv.cols != head_dim) {
      return "v is " + std::to_string(pv.cols) + " wide, not head_dim " + std::to_string(head_dim);
    }
    if (mask && mask->op == "add" && mask->per_column) {
      return "add reads one value per key, not a mask shaped like the scores";
    }
    if (mask && mask->op == "add" && mask->other_dtype != scores.input_dtype) {
      return "the mask is " + std::string(DTypeName(mask->other_dtype)) +
             "; attention reads it in q's dtype " + std::string(DTypeName(scores.input_dtype));
    }
    return at;
  }

  void StartAttention(const ResolvedGraph& graph, size_t first, size_t last) {
    if (open_) Close("attention starts a new kernel: it reads q, k and v as stored");
    const ResolvedOp& scores = graph.ops[first];
    Open(AttentionName(), scores);
    auto* key = open_->mutable_key();
    for (auto [name, size] : {std::pair{"q_heads", int64_t{1}},
                              {"kv_heads", int64_t{1}},
                              {"q_len", scores.rows},
                              {"kv_len", scores.cols},
                              {"head_dim", scores.k}}) {
      auto* d = key->add_shape();
      d->set_name(name);
      d->set_size(size);
    }
    for (size_t i = first; i <= last; ++i) {
      const ResolvedOp& op = graph.ops[i];
      if (op.op == "causal_mask") key->set_attention_mask(v1::ATTENTION_MASK_CAUSAL);
      if (op.op == "add") key->set_attention_mask(v1::ATTENTION_MASK_TENSOR);
      open_->add_ops(op.index);
    }
  }

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
    // B stored [N, K] is B column-major.
    if (op.b_transposed) {
      auto* l = key->add_layouts();
      l->set_tensor("b");
      l->set_layout(v1::LAYOUT_COL_MAJOR);
    }
  }

  // swiglu right after a matmul_t: the GEMM's weight [2n, k] is its gate's
  // n rows over its up projection's (b, and b_up = b + n rows), and the
  // kernel computes silu(gate) * up itself (KernelKey.gate).
  void GateMatmul(const ResolvedGraph& graph, const ResolvedOp& op) {
    const std::string at = "key.ops[" + std::to_string(op.index) + "]: ";
    const ResolvedOp* matmul = op.index > 0 ? &graph.ops[op.index - 1] : nullptr;
    if (matmul && matmul->output_wanted) {
      throw std::invalid_argument(at + "swiglu keeps " + Quoted(matmul->output) +
                                  " in registers; it cannot be a graph output");
    }
    if (!matmul || matmul->op != "matmul_t" || !open_ ||
        open_->ops(open_->ops_size() - 1) != matmul->index) {
      throw std::invalid_argument(
          at +
          "swiglu gates the two halves of a matmul_t's output (weights [2n, k], the gate's "
          "rows first) and must follow it directly");
    }
    auto* key = open_->mutable_key();
    key->set_gate(v1::GATE_SWIGLU);
    for (auto& d : *key->mutable_shape()) {
      if (d.name() == "n") d.set_size(op.cols);
    }
  }

  void StartRowReduction(const ResolvedOp& op) {
    if (open_ && OpSpecOf(open_->key().op()).fusion == FusionKind::kMatmul) {
      Close(op.op + " reduces whole rows of " + std::to_string(op.cols) +
            " columns; a GEMM block tile owns only some columns of a row, so the reduction "
            "runs as its own kernel");
    } else if (open_ && OpSpecOf(open_->key().op()).fusion == FusionKind::kAttention) {
      Close(op.op +
            " reduces whole rows of attention's output; an attention block owns "
            "whole rows, but its kernels take no row op after them");
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
    // The kernel of a matmul_t that did not become attention says why.
    if (!not_attention_.empty())
      reason += (reason.empty() ? "" : "; ") + std::exchange(not_attention_, "");
    open_->set_split_reason(std::move(reason));
    open_ = nullptr;
  }

  const KeyLimits& limits_;
  v1::FusionPlan plan_;
  v1::FusedKernel* open_ = nullptr;
  // The last op's output is a graph output and the next op is a row op.
  bool prologue_output_wanted_ = false;
  // Why the last attention-shaped ops are not one attention kernel, for the
  // split reason of the kernel they open.
  std::string not_attention_;
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
