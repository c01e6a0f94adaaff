#include "runtime/hip/code_object_metadata.h"

#include <elf.h>

#include <cstring>
#include <stdexcept>

#include "runtime/hip/msgpack_value.h"

namespace tiletune::runtime::hip {
namespace {

constexpr std::string_view kBundleMagic = "__CLANG_OFFLOAD_BUNDLE__";
constexpr uint32_t kNoteAmdgpuMetadata = 32;  // NT_AMDGPU_METADATA, owner "AMDGPU"

[[noreturn]] void Fail(const std::string& what) {
  throw std::runtime_error("code object: " + what);
}

// A trivially copyable T at `offset`, bounds-checked; memcpy because nothing
// promises alignment inside a std::string.
template <typename T>
T ReadAt(std::string_view bytes, uint64_t offset, const char* what) {
  if (offset > bytes.size() || sizeof(T) > bytes.size() - offset) {
    Fail(std::string(what) + " past the end (" + std::to_string(bytes.size()) + " bytes)");
  }
  T out;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return out;
}

std::string_view Slice(std::string_view bytes, uint64_t offset, uint64_t size, const char* what) {
  if (offset > bytes.size() || size > bytes.size() - offset) {
    Fail(std::string(what) + " past the end (" + std::to_string(bytes.size()) + " bytes)");
  }
  return bytes.substr(offset, size);
}

// The AMD GPU ELF inside a clang offload bundle: magic, entry count, then
// per entry offset, size, id length and id ("hipv4-amdgcn-amd-amdhsa--gfx90a").
std::string_view ElfInBundle(std::string_view bundle) {
  const auto count = ReadAt<uint64_t>(bundle, kBundleMagic.size(), "bundle entry count");
  uint64_t at = kBundleMagic.size() + 8;
  for (uint64_t i = 0; i < count; ++i) {
    const auto offset = ReadAt<uint64_t>(bundle, at, "bundle entry");
    const auto size = ReadAt<uint64_t>(bundle, at + 8, "bundle entry");
    const auto id_size = ReadAt<uint64_t>(bundle, at + 16, "bundle entry");
    const std::string_view id = Slice(bundle, at + 24, id_size, "bundle entry id");
    at += 24 + id_size;
    if (size > 0 && id.find("amdgcn") != std::string_view::npos) {
      return Slice(bundle, offset, size, "bundled code object");
    }
  }
  Fail("offload bundle holds no amdgcn code object");
}

// The payload of the AMDGPU metadata note, from the ELF's note sections.
std::string_view MetadataNote(std::string_view elf) {
  if (!elf.starts_with(std::string_view(ELFMAG, SELFMAG))) Fail("neither ELF nor offload bundle");
  const auto header = ReadAt<Elf64_Ehdr>(elf, 0, "ELF header");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_machine != EM_AMDGPU) {
    Fail("not a 64-bit AMD GPU ELF (e_machine " + std::to_string(header.e_machine) + ")");
  }
  if (header.e_shentsize != sizeof(Elf64_Shdr)) Fail("unexpected section header size");
  for (uint16_t s = 0; s < header.e_shnum; ++s) {
    const auto section =
        ReadAt<Elf64_Shdr>(elf, header.e_shoff + uint64_t{s} * sizeof(Elf64_Shdr), "section");
    if (section.sh_type != SHT_NOTE) continue;
    const std::string_view notes = Slice(elf, section.sh_offset, section.sh_size, "note section");
    // Notes: header, name and descriptor, each padded to 4 bytes.
    for (uint64_t at = 0; at + sizeof(Elf64_Nhdr) <= notes.size();) {
      const auto note = ReadAt<Elf64_Nhdr>(notes, at, "note");
      const uint64_t name_at = at + sizeof(Elf64_Nhdr);
      const uint64_t desc_at = name_at + (uint64_t{note.n_namesz} + 3) / 4 * 4;
      const std::string_view name = Slice(notes, name_at, note.n_namesz, "note name");
      const std::string_view desc = Slice(notes, desc_at, note.n_descsz, "note descriptor");
      if (note.n_type == kNoteAmdgpuMetadata && name == std::string_view("AMDGPU\0", 7)) {
        return desc;
      }
      at = desc_at + (uint64_t{note.n_descsz} + 3) / 4 * 4;
    }
  }
  Fail("no AMDGPU metadata note (code object v2 or older?)");
}

int64_t IntField(const MsgpackValue& map, std::string_view key) {
  const MsgpackValue* v = map.Find(key);
  return v && v->kind == MsgpackValue::Kind::kInt ? v->integer : 0;
}

std::string StringField(const MsgpackValue& map, std::string_view key) {
  const MsgpackValue* v = map.Find(key);
  return v && v->kind == MsgpackValue::Kind::kString ? v->text : "";
}

KernelMetadata ToKernel(const MsgpackValue& entry, std::string target) {
  KernelMetadata k;
  k.name = StringField(entry, ".name");
  k.target = std::move(target);
  k.vgpr_count = IntField(entry, ".vgpr_count");
  k.agpr_count = IntField(entry, ".agpr_count");
  k.sgpr_count = IntField(entry, ".sgpr_count");
  k.vgpr_spill_count = IntField(entry, ".vgpr_spill_count");
  k.sgpr_spill_count = IntField(entry, ".sgpr_spill_count");
  k.group_segment_fixed_size = IntField(entry, ".group_segment_fixed_size");
  k.private_segment_fixed_size = IntField(entry, ".private_segment_fixed_size");
  k.kernarg_segment_size = IntField(entry, ".kernarg_segment_size");
  k.wavefront_size = IntField(entry, ".wavefront_size");
  k.max_flat_workgroup_size = IntField(entry, ".max_flat_workgroup_size");
  if (const MsgpackValue* args = entry.Find(".args");
      args && args->kind == MsgpackValue::Kind::kArray) {
    for (const auto& arg : args->items) {
      k.arguments.push_back(
          {StringField(arg, ".value_kind"), IntField(arg, ".offset"), IntField(arg, ".size")});
    }
  }
  return k;
}

}  // namespace

KernelMetadata ReadKernelMetadata(std::string_view code_object, std::string_view kernel) {
  const std::string_view elf =
      code_object.starts_with(kBundleMagic) ? ElfInBundle(code_object) : code_object;
  const MsgpackValue root = DecodeMsgpack(MetadataNote(elf));
  const MsgpackValue* kernels = root.Find("amdhsa.kernels");
  if (!kernels || kernels->kind != MsgpackValue::Kind::kArray) {
    Fail("metadata has no amdhsa.kernels list");
  }
  std::string names;
  for (const auto& entry : kernels->items) {
    const std::string name = StringField(entry, ".name");
    if (name == kernel) return ToKernel(entry, StringField(root, "amdhsa.target"));
    names += (names.empty() ? "" : ", ") + name;
  }
  Fail("no kernel '" + std::string(kernel) + "' (it has: " + (names.empty() ? "none" : names) +
       ")");
}

ResourceReport ToResourceReport(const KernelMetadata& metadata) {
  ResourceReport report;
  report.registers = static_cast<int>(metadata.vgpr_count + metadata.agpr_count);
  report.shared_memory_bytes = metadata.group_segment_fixed_size;
  report.spill_bytes = 4 * (metadata.vgpr_spill_count + metadata.sgpr_spill_count);
  report.stack_bytes = metadata.private_segment_fixed_size;
  return report;
}

}  // namespace tiletune::runtime::hip
