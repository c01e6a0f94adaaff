#pragma once

#include <string>

#include "tiletune/v1/artifacts.pb.h"

namespace tiletune {

// What an artifact's signature covers, one "name=value" line each: the code
// (its content hash), how it is loaded and launched (format, entry, target,
// launch geometry with its tensor maps), what it is (device class, kernel name, source hash, the
// key's canonical string) and its whole argument ABI, every field and chain
// slot with all it says: everything a launcher acts on but the source.
// The daemon signs this text and the C++ launcher verifies it;
// docs/kernel-abi.md ("Signatures") spells it out for other languages.
std::string SignedStatement(const v1::KernelArtifact& artifact);

}  // namespace tiletune
