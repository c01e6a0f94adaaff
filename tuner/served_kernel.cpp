#include "tuner/served_kernel.h"

#include "kernels/core/abi_description.h"
#include "kernels/core/kernel_key.h"
#include "kernels/core/key_space.h"
#include "runtime/content_hash.h"
#include "tuner/device_description_of.h"

namespace tiletune::tuner {
namespace {

v1::KernelArtifact::Format FormatOf(std::string_view backend) {
  if (backend == "cuda") return v1::KernelArtifact::FORMAT_CUBIN;
  if (backend == "hip") return v1::KernelArtifact::FORMAT_HSACO;
  return v1::KernelArtifact::FORMAT_HOST_SHARED_OBJECT;
}

}  // namespace

std::variant<ServedKernel, std::string> BuildServedKernel(const v1::Record& record,
                                                          const runtime::DeviceInfo& device,
                                                          runtime::Backend& backend,
                                                          const runtime::CompileLimits& limits) {
  const v1::TunedConfig& config = record.config();
  std::string why;
  const kernels::KeySpace space =
      kernels::KeySpace::Of(record.key(), DeviceDescriptionOf(device), &why);
  if (space.empty()) return "no template serves the key on " + device.id + ": " + why;
  const kernels::Variant params(config.params().begin(), config.params().end());
  const kernels::KeySpace only = space.Only(config.kernel_name(), params, &why);
  if (only.empty()) return "on " + device.id + ": " + why;
  const kernels::TemplateSpace& chosen = only.templates().front();
  ServedKernel served;
  served.backend = device.backend;
  served.source = chosen.kernel->Source(record.key(), params);
  if (const std::string hash = runtime::ContentHash(served.source.code);
      hash != config.source_hash()) {
    return "this daemon generates another source for the record's variant (hash " + hash +
           ", the record measured " + config.source_hash() +
           "): its kernel library differs; re-tune the key";
  }
  served.compiled = backend.Compile(served.source, device, limits);
  if (!served.compiled.ok)
    return "compiling " + config.kernel_name() + " failed: " + served.compiled.log;
  return served;
}

v1::KernelArtifact DescribeArtifact(const v1::Record& record, const ServedKernel& kernel,
                                    const std::string& code, bool include_source) {
  v1::KernelArtifact artifact;
  artifact.set_format(FormatOf(kernel.backend));
  artifact.set_code_bytes(static_cast<int64_t>(code.size()));
  artifact.set_content_hash(runtime::ContentHash(code));
  artifact.set_entry(kernel.source.entry);
  artifact.set_target(kernel.compiled.target);
  artifact.set_compiler(record.toolchain().compiler_version());
  for (const std::string& option : kernel.compiled.options) artifact.add_compile_options(option);
  artifact.set_source_hash(record.config().source_hash());
  if (include_source) artifact.set_source(kernel.source.code);
  *artifact.mutable_launch() = kernel.source.launch;
  *artifact.mutable_abi() = kernels::DescribeLaunchAbi(
      record.key(), artifact.format() == v1::KernelArtifact::FORMAT_HOST_SHARED_OBJECT
                        ? v1::KernelAbi::PASSING_POINTER
                        : v1::KernelAbi::PASSING_BY_VALUE);
  artifact.set_kernel_name(record.config().kernel_name());
  *artifact.mutable_params() = record.config().params();
  artifact.set_device_class(record.device_class());
  *artifact.mutable_key() = record.key();
  artifact.set_canonical_key(kernels::CanonicalKeyString(record.key()));
  return artifact;
}

}  // namespace tiletune::tuner
