#include "device_class.h"

#include "content_hash.h"

namespace tiletune::runtime {

std::string DeviceClassId(const v1::DeviceFingerprint& fingerprint) {
  return ContentHasher()
      .UpdateField(fingerprint.vendor())
      .UpdateField(fingerprint.arch())
      .UpdateField(fingerprint.name())
      .UpdateField(std::to_string(fingerprint.compute_units()))
      .HexDigest()
      .substr(0, 16);
}

std::optional<std::string_view> BackendOfVendor(std::string_view vendor) {
  // As the fingerprints of runtime/host, runtime/cuda and runtime/hip set it.
  if (vendor == "cpu") return "host";
  if (vendor == "nvidia") return "cuda";
  if (vendor == "amd") return "hip";
  return std::nullopt;
}

}  // namespace tiletune::runtime
