#include "bench/gpu/gemm/gemm_shapes.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "kernels/core/kernel_key.h"

namespace tiletune::bench {
namespace {

std::string Trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

int64_t PositiveInteger(const std::string& text, const std::string& entry) {
  const std::string digits = Trimmed(text);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
      value <= 0) {
    throw std::invalid_argument("--shapes: '" + entry + "' is not m,n,k with positive integers");
  }
  return value;
}

}  // namespace

std::string PrecisionName(Precision precision) {
  return precision == Precision::kBf16 ? "bf16" : "f32-tf32";
}

std::string EpilogueName(Epilogue epilogue) {
  switch (epilogue) {
    case Epilogue::kPlain: return "plain";
    case Epilogue::kBiasGeluTanh: return "bias+gelu_tanh";
    case Epilogue::kBiasGeluTanhResidual: return "bias+gelu_tanh+residual";
    case Epilogue::kSwiglu: return "swiglu";
  }
  throw std::invalid_argument("unknown epilogue");
}

std::vector<Epilogue> ParseEpilogueList(const std::string& text) {
  std::vector<Epilogue> epilogues;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string entry = Trimmed(text.substr(start, end - start));
    start = end + 1;
    if (entry.empty()) continue;
    bool known = false;
    for (const Epilogue e : {Epilogue::kPlain, Epilogue::kBiasGeluTanh,
                             Epilogue::kBiasGeluTanhResidual, Epilogue::kSwiglu}) {
      if (entry == EpilogueName(e)) {
        epilogues.push_back(e);
        known = true;
      }
    }
    if (!known) {
      throw std::invalid_argument(
          "--epilogues: '" + entry +
          "' is not plain, bias+gelu_tanh, bias+gelu_tanh+residual or swiglu");
    }
  }
  if (epilogues.empty()) throw std::invalid_argument("--epilogues: none in '" + text + "'");
  return epilogues;
}

std::vector<GemmShape> DefaultShapes() {
  std::vector<GemmShape> shapes;
  for (const int64_t m : {16, 128, 4096}) {
    for (const auto& [n, k] :
         {std::pair<int64_t, int64_t>{4096, 4096}, {14336, 4096}, {4096, 14336}, {6144, 4096}}) {
      shapes.push_back({m, n, k});
    }
  }
  shapes.push_back({37, 53, 29});
  shapes.push_back({300, 200, 136});
  return shapes;
}

std::vector<GemmShape> ParseShapeList(const std::string& text) {
  std::vector<GemmShape> shapes;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(';', start), text.size());
    const std::string entry = Trimmed(text.substr(start, end - start));
    start = end + 1;
    if (entry.empty()) continue;
    const size_t c1 = entry.find(','), c2 = c1 == std::string::npos ? c1 : entry.find(',', c1 + 1);
    if (c2 == std::string::npos || entry.find(',', c2 + 1) != std::string::npos) {
      throw std::invalid_argument("--shapes: '" + entry + "' is not m,n,k");
    }
    shapes.push_back({PositiveInteger(entry.substr(0, c1), entry),
                      PositiveInteger(entry.substr(c1 + 1, c2 - c1 - 1), entry),
                      PositiveInteger(entry.substr(c2 + 1), entry)});
  }
  if (shapes.empty()) throw std::invalid_argument("--shapes: no shape in '" + text + "'");
  return shapes;
}

v1::KernelKey GemmKey(const GemmShape& shape, Epilogue epilogue, Precision precision,
                      BLayout b_layout) {
  const v1::DType dtype = precision == Precision::kBf16 ? v1::DTYPE_BF16 : v1::DTYPE_F32;
  v1::KernelKey key;
  key.set_op("gemm");
  key.set_input_dtype(dtype);
  key.set_output_dtype(dtype);
  key.set_accumulate_dtype(v1::DTYPE_F32);
  key.set_allow_tf32(precision == Precision::kF32Tf32);
  for (const auto& [name, size] :
       {std::pair<const char*, int64_t>{"m", shape.m}, {"n", shape.n}, {"k", shape.k}}) {
    auto* dim = key.add_shape();
    dim->set_name(name);
    dim->set_size(size);
  }
  if (b_layout == BLayout::kColMajor) {
    auto* b = key.add_layouts();
    b->set_tensor("b");
    b->set_layout(v1::LAYOUT_COL_MAJOR);
  }
  if (epilogue == Epilogue::kSwiglu) {
    key.set_gate(v1::GATE_SWIGLU);
  } else if (epilogue != Epilogue::kPlain) {
    key.add_chain()->set_op("bias");
    key.add_chain()->set_op("gelu_tanh");
  }
  if (epilogue == Epilogue::kBiasGeluTanhResidual) key.add_chain()->set_op("residual_add");
  return kernels::NormalizeKernelKey(key);
}

bool ChecksWholeOutput(const GemmShape& shape) {
  return shape.m * shape.n * shape.k <= (int64_t{1} << 27);
}

}  // namespace tiletune::bench
