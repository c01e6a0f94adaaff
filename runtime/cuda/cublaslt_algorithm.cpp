#include "runtime/cuda/cublaslt_algorithm.h"

#include <cstring>

#include "kernels/ops/gemm/cublaslt_baseline.h"

namespace tiletune::runtime::cuda {
namespace {

// One configuration attribute: its cublasLt.h id, name and value type.
struct ConfigAttribute {
  int id;
  std::string_view name;
  size_t bytes;
  bool is_signed;
};

constexpr ConfigAttribute kConfigAttributes[] = {
    {CUBLASLT_ALGO_CONFIG_ID, "id", 4, true},
    {CUBLASLT_ALGO_CONFIG_TILE_ID, "tile", 4, false},
    {CUBLASLT_ALGO_CONFIG_STAGES_ID, "stages", 4, false},
    {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, "split-k", 4, false},
    {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, "reduction", 4, false},
    {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, "swizzle", 4, false},
    {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, "custom", 4, false},
    {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, "inner shape", 2, false},
    {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, "cluster", 2, false},
};

}  // namespace

CublasLtAlgoConfig ReadAlgoConfig(const CublasLtApi& api, const cublasLtMatmulAlgo_t& algo) {
  CublasLtAlgoConfig config;
  for (const ConfigAttribute& a : kConfigAttributes) {
    unsigned char value[4] = {};
    size_t written = 0;
    if (api.cublasLtMatmulAlgoConfigGetAttribute(&algo, a.id, value, a.bytes, &written) !=
            CUBLAS_STATUS_SUCCESS ||
        written != a.bytes) {
      continue;  // an attribute this library version does not have
    }
    int64_t number = 0;
    if (a.bytes == 2) {
      uint16_t v;
      std::memcpy(&v, value, sizeof v);
      number = v;
    } else if (a.is_signed) {
      int32_t v;
      std::memcpy(&v, value, sizeof v);
      number = v;
    } else {
      uint32_t v;
      std::memcpy(&v, value, sizeof v);
      number = v;
    }
    config.values.emplace_back(a.name, number);
  }
  return config;
}

std::string CublasLtEpilogueName(uint32_t epilogue) {
  switch (epilogue) {
    case CUBLASLT_EPILOGUE_DEFAULT: return "DEFAULT";
    case CUBLASLT_EPILOGUE_RELU: return "RELU";
    case CUBLASLT_EPILOGUE_BIAS: return "BIAS";
    case CUBLASLT_EPILOGUE_RELU_BIAS: return "RELU_BIAS";
    case CUBLASLT_EPILOGUE_GELU: return "GELU";
    case CUBLASLT_EPILOGUE_GELU_BIAS: return "GELU_BIAS";
    default: return "epilogue " + std::to_string(epilogue);
  }
}

std::string DescribeCublasLtAlgorithm(int index, int results, const CublasLtGemmSpec& spec,
                                      uint64_t workspace_bytes, const CublasLtAlgoConfig& config) {
  std::vector<std::string> fused;
  if (spec.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    fused.push_back("epilogue " + CublasLtEpilogueName(spec.epilogue));
  }
  if (spec.fold.scale_op) fused.push_back("scale as alpha");
  if (spec.fold.residual_op) fused.push_back("residual as C");
  std::string computes = fused.empty() ? "plain product" : "fused";
  for (size_t i = 0; i < fused.size(); ++i) computes += (i == 0 ? " " : ", ") + fused[i];
  if (spec.epilogue_pass) computes += " + our epilogue pass";
  std::string text = std::string(kernels::gemm::kCublasLtName) + " algo " + std::to_string(index) +
                     " of " + std::to_string(results) + " (" + computes + ", workspace " +
                     std::to_string(workspace_bytes) + " bytes";
  for (const auto& [name, value] : config.values) {
    text += ", " + std::string(name) + " " + std::to_string(value);
  }
  return text + ")";
}

std::string AlgoBytes(const cublasLtMatmulAlgo_t& algo) {
  return std::string(reinterpret_cast<const char*>(&algo), sizeof algo);
}

std::optional<cublasLtMatmulAlgo_t> AlgoOfBytes(std::string_view bytes) {
  cublasLtMatmulAlgo_t algo;
  if (bytes.size() != sizeof algo) return std::nullopt;
  std::memcpy(&algo, bytes.data(), sizeof algo);
  return algo;
}

}  // namespace tiletune::runtime::cuda
