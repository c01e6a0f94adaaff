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

}  // namespace tiletune::runtime
