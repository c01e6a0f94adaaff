#include "host_source.h"

#include <stdexcept>

#include "kernels/kernel_key.h"

namespace tiletune::kernels::host {

// Generated from kernels/host/include/<stem>.h by tiletune_embed_text
// (kernels/CMakeLists.txt), each answering for its own file.
std::string_view EmbeddedHostHeader_tiletune_host(std::string_view name);
std::string_view EmbeddedHostHeader_tt_epilogue(std::string_view name);
std::string_view EmbeddedHostHeader_tt_parallel(std::string_view name);
std::string_view EmbeddedHostHeader_tt_math(std::string_view name);
std::string_view EmbeddedHostHeader_tt_rows(std::string_view name);
std::string_view EmbeddedHostHeader_gemm(std::string_view name);
std::string_view EmbeddedHostHeader_softmax(std::string_view name);
std::string_view EmbeddedHostHeader_rmsnorm(std::string_view name);
std::string_view EmbeddedHostHeader_layernorm(std::string_view name);

namespace {

// Every host kernel is compiled with the whole set, so that the cache key of
// a kernel covers any header it may include.
constexpr std::pair<const char*, std::string_view (*)(std::string_view)> kHeaders[] = {
    {"tiletune_host.h", EmbeddedHostHeader_tiletune_host},
    {"tt_epilogue.h", EmbeddedHostHeader_tt_epilogue},
    {"tt_parallel.h", EmbeddedHostHeader_tt_parallel},
    {"tt_math.h", EmbeddedHostHeader_tt_math},
    {"tt_rows.h", EmbeddedHostHeader_tt_rows},
    {"gemm.h", EmbeddedHostHeader_gemm},
    {"softmax.h", EmbeddedHostHeader_softmax},
    {"rmsnorm.h", EmbeddedHostHeader_rmsnorm},
    {"layernorm.h", EmbeddedHostHeader_layernorm}};

std::vector<std::pair<std::string, std::string>> HostHeaders() {
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& [name, embedded] : kHeaders) {
    const std::string_view text = embedded(std::string("host/include/") + name);
    if (text.empty()) throw std::logic_error(std::string("host header not embedded: ") + name);
    headers.emplace_back(name, std::string(text));
  }
  return headers;
}

// One line of the generated epilogue per chain op, in chain order.
std::string EpilogueStep(const v1::ChainOp& op, int index) {
  const std::string i = std::to_string(index);
  if (op.op() == "bias") return "tt::bias{args->chain_tensors[" + i + "]}";
  if (op.op() == "residual_add") return "tt::residual_add{args->chain_tensors[" + i + "]}";
  if (op.op() == "scale") return "tt::scale{args->chain_scalars[" + i + "]}";
  if (op.op() == "cast") return "tt::cast_f32{}";
  return "tt::" + op.op() + "{}";
}

std::string EpilogueFunctor(const v1::KernelKey& key) {
  std::string s =
      "struct Epilogue {\n"
      "  const tt_host_args* args;\n"
      "  float operator()(float v, int64_t idx, int64_t col) const {\n";
  for (int i = 0; i < key.chain_size(); ++i) {
    s += "    v = " + EpilogueStep(key.chain(i), i) + "(v, idx, col);  // " + key.chain(i).op() +
         "\n";
  }
  s += "    (void)idx;\n    (void)col;\n    return v;\n  }\n};\n";
  return s;
}

std::string EntryBody(const HostKernelSpec& spec, int64_t planted_fault) {
  const std::string call =
      "  const int status = " + spec.function + "<Config>(args, Epilogue{args});\n";
  switch (planted_fault) {
    case 0: return call + "  return status;\n";
    case 1: return "  for (;;) __asm__ __volatile__(\"\");  // planted fault: hang\n";
    case 2:
      // Volatile both ways: the null pointer is not known as null, and the
      // store cannot be dropped as dead.
      return "  volatile float* volatile target = nullptr;  // planted fault: SIGSEGV\n"
             "  *target = 1.0f;\n" +
             call + "  return status;\n";
    default:
      return call +
             "  // planted fault: a wrong result\n"
             "  for (int64_t i = 0; i < " +
             spec.output_elements + "; ++i) args->out[i] += 1.0f;\n  return status;\n";
  }
}

}  // namespace

std::optional<std::string> UnsupportedHostTypes(const v1::KernelKey& key) {
  const v1::KernelKey k = NormalizeKernelKey(key);
  if (k.input_dtype() != v1::DTYPE_F32) {
    return "host kernels take f32 inputs, not " + std::string(DTypeName(k.input_dtype()));
  }
  if (k.output_dtype() != v1::DTYPE_F32) {
    return "host kernels write f32 outputs, not " + std::string(DTypeName(k.output_dtype()));
  }
  for (int i = 0; i < k.chain_size(); ++i) {
    if (k.chain(i).dtype() != v1::DTYPE_F32) {
      return "chain[" + std::to_string(i) + "] (" + k.chain(i).op() + ") has dtype " +
             std::string(DTypeName(k.chain(i).dtype())) + "; host kernels support f32 only";
    }
  }
  return std::nullopt;
}

KernelSource GenerateHostSource(const v1::KernelKey& key, const HostKernelSpec& spec,
                                int64_t planted_fault) {
  std::string config = "struct Config {\n";
  for (const auto& [name, value] : spec.config) {
    config += "  static constexpr int64_t " + name + " = " + std::to_string(value) + ";\n";
  }
  config += "};\n";

  KernelSource source;
  source.kernel_name = spec.kernel_name;
  source.entry = "tiletune_" + spec.kernel_name;
  for (char& c : source.entry) {
    if (c == '-') c = '_';
  }
  source.code = "// Generated by tiletune: " + spec.kernel_name +
                "\n// key: " + CanonicalKeyString(key) + "\n#include \"" + spec.header +
                "\"\n#include \"tt_epilogue.h\"\n\nnamespace {\n\n" + config + "\n" +
                EpilogueFunctor(key) + "\n}  // namespace\n\nTT_EXPORT int " + source.entry +
                "(const tt_host_args* args) {\n" + EntryBody(spec, planted_fault) + "}\n";
  source.headers = HostHeaders();
  source.launch.set_threads(spec.threads);
  return source;
}

int64_t RequiredParam(const Variant& variant, std::string_view kernel_name,
                      const std::string& name) {
  const auto it = variant.find(name);
  if (it == variant.end()) {
    throw std::invalid_argument(std::string(kernel_name) + ": variant has no parameter '" + name +
                                "' (" + VariantString(variant) + ")");
  }
  return it->second;
}

int64_t PlantedFault(const Variant& variant) {
  const auto it = variant.find(std::string(kPlantedFault));
  if (it == variant.end()) return 0;
  if (it->second < 1 || it->second > 3) {
    throw std::invalid_argument(
        "planted_fault must be 1 (hang), 2 (crash) or 3 (wrong result), "
        "got " +
        std::to_string(it->second));
  }
  return it->second;
}

}  // namespace tiletune::kernels::host
