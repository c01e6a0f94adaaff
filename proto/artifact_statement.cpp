#include "proto/artifact_statement.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace tiletune {
namespace {

// "1x160x128"; "-" for none: every line splits on single spaces.
template <class List>
std::string Dims(const List& sizes) {
  std::string out;
  for (const auto size : sizes) out += (out.empty() ? "" : "x") + std::to_string(size);
  return out.empty() ? "-" : out;
}

// The IEEE-754 bits, so that both sides print a double alike.
std::string Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
  return text;
}

}  // namespace

std::string SignedStatement(const v1::KernelArtifact& a) {
  const v1::KernelAbi& abi = a.abi();
  const v1::LaunchGeometry& launch = a.launch();
  std::ostringstream s;
  s << "tiletune-artifact=3\n"
    << "content_hash=" << a.content_hash() << "\n"
    << "code_bytes=" << a.code_bytes() << "\n"
    << "format=" << static_cast<int>(a.format()) << "\n"
    << "entry=" << a.entry() << "\n"
    << "target=" << a.target() << "\n"
    << "device_class=" << a.device_class() << "\n"
    << "kernel_name=" << a.kernel_name() << "\n"
    << "source_hash=" << a.source_hash() << "\n"
    << "key=" << a.canonical_key() << "\n"
    << "launch=" << Dims(launch.grid()) << " " << Dims(launch.block()) << " "
    << launch.shared_memory_bytes() << " " << launch.threads() << " "
    << launch.blocks_per_compute_unit() << " " << launch.argument_bytes() << "\n";
  for (const v1::TensorMapArgument& map : launch.tensor_maps()) {
    // A map's view, where it has one, ends its line (older statements stay as they were).
    s << "tensor_map=" << map.tensor() << " " << map.offset() << " " << map.box_inner() << " "
      << map.box_rows() << " " << map.swizzle_bytes()
      << (map.view().empty() ? "" : " " + Dims(map.view())) << "\n";
  }
  s << "abi=" << abi.struct_name() << " " << abi.version() << " " << abi.struct_bytes() << " "
    << static_cast<int>(abi.passing()) << " " << abi.struct_alignment() << " " << abi.max_chain()
    << " " << abi.tensor_alignment() << "\n";
  for (const v1::AbiField& f : abi.fields()) {
    s << "field=" << f.name() << " " << static_cast<int>(f.kind()) << " " << f.offset() << " "
      << f.bytes() << " " << f.value() << " " << static_cast<int>(f.role()) << " "
      << static_cast<int>(f.dtype()) << " " << Dims(f.shape()) << " "
      << static_cast<int>(f.layout()) << " " << (f.may_be_null() ? 1 : 0) << " "
      << Bits(f.default_value()) << "\n";
    for (const v1::ChainSlot& slot : f.chain()) {
      s << "slot=" << slot.op() << " " << (slot.tensor() ? 1 : 0) << " "
        << static_cast<int>(slot.dtype()) << " " << Dims(slot.shape()) << " "
        << (slot.scalar() ? 1 : 0) << "\n";
    }
  }
  return s.str();
}

}  // namespace tiletune
