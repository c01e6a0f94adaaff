#include "tests/kernels/ops/attention/attention_sm90a_test_kernels.h"

#include "kernels/source/device_headers.h"

namespace tiletune::kernels::attention::testing {
namespace {

std::string Int(const char* name, int64_t value) {
  return "  static constexpr int " + std::string(name) + " = " + std::to_string(value) + ";\n";
}
std::string Bool(const char* name, bool value) {
  return "  static constexpr bool " + std::string(name) + " = " + (value ? "true" : "false") +
         ";\n";
}

}  // namespace

AttentionTestKernel TestKernel(Family family, const Sm90aAttentionProblem& p,
                               const Variant& variant, bool f16) {
  AttentionTestKernel k;
  k.family = family;
  k.variant = variant;
  const bool decode = family == Family::kDecode;
  const std::string type = f16 ? "tt::f16" : "tt::bf16";
  std::string config = "struct Config {\n  using in_type = " + type +
                       ";\n  using out_type = " + type + ";\n" + Bool("causal", p.causal) +
                       Bool("masked", p.mask_tensor) + Bool("bshd", p.bshd) +
                       Bool("write_lse", p.write_lse) + Int("head_dim", p.head_dim);
  for (const auto& [name, value] : variant) config += Int(name.c_str(), value);
  if (decode) {
    config += Int("rows", DecodeRows(p));
    k.threads = DecodeAttentionThreads(p, variant);
    k.shared_bytes = DecodeAttentionSharedBytes(p, variant);
  } else {
    k.threads = TmaWsAttentionThreads(variant);
    k.shared_bytes = TmaWsAttentionSharedBytes(p, variant);
  }
  config += Int("shared_bytes", k.shared_bytes) + "};\n";
  std::string entry = decode ? "test_decode_attention" : "test_tma_ws_attention";
  entry += std::string("_d") + std::to_string(p.head_dim) + (p.causal ? "_causal" : "") +
           (p.bshd ? "_bshd" : "_bhsd") + (p.write_lse ? "_lse" : "") + (f16 ? "_f16" : "");
  for (const auto& [name, value] : variant) entry += "_" + name + std::to_string(value);
  const std::string cluster =
      decode && variant.at("split") > 1
          ? "__cluster_dims__(" + std::to_string(variant.at("split")) + ", 1, 1) "
          : "";
  k.source.kernel_name = decode ? "decode_attention" : "tma_ws_attention";
  k.source.entry = entry;
  k.source.code =
      std::string("#include \"tt/device.h\"\n#include \"ops/attention/attention_args.h\"\n") +
      (decode ? "#include \"ops/attention/device/attention_decode_split_kv.h\"\n"
              : "#include \"ops/attention/device/attention_sm90a_wgmma.h\"\n") +
      "namespace {\n" + config +
      "struct Epilogue {\n  __device__ float operator()(float v, long long, long long) const "
      "{ return v; }\n};\n}  // namespace\nTT_KERNEL(" +
      std::to_string(k.threads) + ") " + cluster + entry +
      "(const __grid_constant__ tt_attention_tma_args args) {\n  tt::attention::" +
      (decode ? "decode_attention" : "tma_ws_attention") + "<Config>(args, Epilogue{});\n}\n";
  const AttentionLaunch launch =
      decode ? DecodeAttentionLaunch(p, variant) : TmaWsAttentionLaunch(p, variant);
  for (const int64_t g : launch.grid) k.source.launch.add_grid(g);
  k.source.launch.set_blocks_per_compute_unit(static_cast<int32_t>(launch.blocks_per_sm));
  k.source.headers = DeviceHeaders();
  k.source.compile_options = {"-std=c++17", std::string(kArchSpecificOption)};
  return k;
}

std::vector<AttentionTestKernel> TestKernels(Family family, const Sm90aAttentionProblem& p,
                                             bool f16) {
  const SearchSpace space =
      family == Family::kDecode ? DecodeAttentionSpace(p, kH200) : TmaWsAttentionSpace(p, kH200);
  std::vector<AttentionTestKernel> kernels;
  for (const Variant& v : space.ValidVariants()) kernels.push_back(TestKernel(family, p, v, f16));
  return kernels;
}

}  // namespace tiletune::kernels::attention::testing
