#include "server/served_artifact.h"

#include <fstream>
#include <iterator>
#include <optional>

#include "server/artifact_signer.h"
#include "tuner/served_kernel.h"

namespace tiletune::server {
namespace {

// Run the record's baseline instead, because of `reason`.
v1::Fallback BaselineOf(const v1::Record& record, std::string reason) {
  v1::Fallback fallback;
  fallback.set_library(record.baseline_name());
  fallback.set_reason(std::move(reason));
  return fallback;
}

// Why `lookup` serves no tuned kernel, with what to run instead; nullopt for
// a HIT of a tuned record.
std::optional<v1::Fallback> NothingServed(const v1::LookupResponse& lookup) {
  if (lookup.result() != v1::LookupResponse::RESULT_HIT) return lookup.fallback();
  if (lookup.record().winner() == v1::WINNER_TUNED) return std::nullopt;
  return BaselineOf(lookup.record(), "no tuned kernel beat " + lookup.record().baseline_name() +
                                         " on this key (the record is VENDOR): run it");
}

std::optional<std::string> ReadArtifact(const std::string& path, int64_t max_bytes,
                                        std::string* code) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "cannot read the compiled kernel " + path;
  const auto bytes = static_cast<int64_t>(in.tellg());
  if (bytes > max_bytes) {
    return "the compiled kernel has " + std::to_string(bytes) + " bytes; max_artifact_bytes is " +
           std::to_string(max_bytes);
  }
  in.seekg(0);
  code->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return std::nullopt;
}

}  // namespace

ArtifactAnswer ServeArtifact(const ServiceContext& ctx, const v1::LookupResponse& lookup,
                             bool include_source) {
  if (auto fallback = NothingServed(lookup)) return *fallback;
  const v1::Record& record = lookup.record();
  const ManagedDevice* device = ctx.devices.FindByClass(record.device_class());
  if (!device) {
    return BaselineOf(record, "no device of class " + record.device_class() +
                                  " on this daemon to build the kernel for; ask a daemon that "
                                  "has one");
  }
  // At compile_niceness but not under sched_policy: a caller waits for it.
  const runtime::CompileLimits limits{.timeout_seconds = ctx.config.tuning.compile_timeout_seconds,
                                      .priority = {.niceness = ctx.config.tuning.compile_niceness}};
  auto built = tuner::BuildServedKernel(record, device->info, *device->backend, limits);
  if (auto* why = std::get_if<std::string>(&built)) return BaselineOf(record, *why);
  const tuner::ServedKernel& kernel = std::get<tuner::ServedKernel>(built);
  ServedArtifact served;
  if (auto error = ReadArtifact(kernel.compiled.artifact_path, ctx.config.max_artifact_bytes,
                                &served.code)) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, *error);
  }
  served.artifact = tuner::DescribeArtifact(record, kernel, served.code, include_source);
  if (ctx.signer) ctx.signer->Sign(served.artifact);
  return served;
}

}  // namespace tiletune::server
