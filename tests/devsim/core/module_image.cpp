#include "module_image.h"

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "device.h"

namespace devsim {
namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint32_t kFatbinWrapperMagic = 0x466243b1u;  // __fatBinC_Wrapper_t
constexpr uint16_t kEntryPtx = 1, kEntryElf = 2;
constexpr uint64_t kEntryCompressed = 0x2000 | 0x8000;
constexpr uint32_t kDeviceSm = Arch::major * 10 + Arch::minor;
constexpr size_t kUnboundedElf = size_t(1) << 30;  // an ELF whose size nobody told us

template <typename T>
T read(const unsigned char* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

void add_name(ImageKernels& out, std::string name) {
  if (name.empty() || std::find(out.names.begin(), out.names.end(), name) != out.names.end()) return;
  out.names.push_back(std::move(name));
}

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

// `.entry NAME (` anywhere in the text (after `.visible`/`.weak`, or alone).
void ptx_entries(const char* text, size_t size, ImageKernels& out) {
  const std::string_view ptx(text, size);
  for (size_t at = ptx.find(".entry"); at != std::string_view::npos; at = ptx.find(".entry", at + 6)) {
    size_t begin = at + 6;
    if (begin >= ptx.size() || (ptx[begin] != ' ' && ptx[begin] != '\t')) continue;
    while (begin < ptx.size() && (ptx[begin] == ' ' || ptx[begin] == '\t')) ++begin;
    size_t end = begin;
    while (end < ptx.size() && is_ident_char(ptx[end])) ++end;
    add_name(out, std::string(ptx.substr(begin, end - begin)));
  }
}

// Global (or weak) defined function symbols of a 64-bit little-endian ELF.
void elf_functions(const unsigned char* elf, size_t size, ImageKernels& out) {
  if (size < sizeof(Elf64_Ehdr) || elf[EI_CLASS] != ELFCLASS64) return;
  const auto header = read<Elf64_Ehdr>(elf);
  if (header.e_shentsize != sizeof(Elf64_Shdr)) return;
  const uint64_t table_end = header.e_shoff + uint64_t(header.e_shnum) * sizeof(Elf64_Shdr);
  if (header.e_shoff == 0 || table_end > size) return;
  auto section = [&](size_t i) { return read<Elf64_Shdr>(elf + header.e_shoff + i * sizeof(Elf64_Shdr)); };
  for (size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr symtab = section(i);
    if (symtab.sh_type != SHT_SYMTAB || symtab.sh_link >= header.e_shnum) continue;
    const Elf64_Shdr strtab = section(symtab.sh_link);
    if (symtab.sh_offset + symtab.sh_size > size || strtab.sh_offset + strtab.sh_size > size) return;
    for (uint64_t s = 0; s + sizeof(Elf64_Sym) <= symtab.sh_size; s += sizeof(Elf64_Sym)) {
      const auto sym = read<Elf64_Sym>(elf + symtab.sh_offset + s);
      const unsigned bind = ELF64_ST_BIND(sym.st_info);
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF) continue;
      if ((bind != STB_GLOBAL && bind != STB_WEAK) || sym.st_name >= strtab.sh_size) continue;
      const char* name = reinterpret_cast<const char*>(elf + strtab.sh_offset + sym.st_name);
      add_name(out, std::string(name, strnlen(name, strtab.sh_size - sym.st_name)));
    }
  }
}

size_t elf_size(const unsigned char* elf) {  // the section header table ends the file
  const auto header = read<Elf64_Ehdr>(elf);
  return size_t(header.e_shoff + uint64_t(header.e_shnum) * header.e_shentsize);
}

// The SASS a real sm_75 driver would load: its own architecture, else the newest older one of
// the same major version; anything else would be JIT-compiled from PTX.
struct ElfChoice {
  const unsigned char* elf = nullptr;
  size_t size = 0;
  uint32_t sm = 0;

  void offer(const unsigned char* payload, size_t payload_size, uint32_t entry_sm) {
    if (entry_sm > kDeviceSm || entry_sm / 10 != kDeviceSm / 10 || entry_sm <= sm) return;
    elf = payload, size = payload_size, sm = entry_sm;
  }
};

void fatbin_entries(const unsigned char* fatbin, size_t size, bool with_names, ImageKernels& out) {
  ElfChoice choice;
  const uint16_t header_size = read<uint16_t>(fatbin + 6);
  const uint64_t entries_size = read<uint64_t>(fatbin + 8);
  if (header_size < 16) return;
  const uint64_t end = std::min<uint64_t>(size, header_size + entries_size);
  for (uint64_t at = header_size; at + 0x30 <= end;) {
    const unsigned char* entry = fatbin + at;
    const uint16_t kind = read<uint16_t>(entry);
    const uint32_t entry_header = read<uint32_t>(entry + 4);
    const uint64_t payload_size = read<uint64_t>(entry + 8);
    const uint64_t flags = read<uint64_t>(entry + 0x28);
    if (entry_header < 0x30 || at + entry_header + payload_size > end) return;
    const unsigned char* payload = entry + entry_header;
    if (flags & kEntryCompressed) {
      ++out.compressed_entries;
    } else if (kind == kEntryElf) {
      if (with_names) elf_functions(payload, payload_size, out);
      choice.offer(payload, payload_size, read<uint32_t>(entry + 0x1c));
    } else if (kind == kEntryPtx && with_names) {
      ptx_entries(reinterpret_cast<const char*>(payload), strnlen(reinterpret_cast<const char*>(payload), payload_size), out);
    }
    at += entry_header + payload_size;
  }
  if (choice.elf) out.resources = cubin_resources(choice.elf, choice.size);
}

ImageKernels read_image(const void* image, size_t size, bool with_names) {
  ImageKernels out;
  auto bytes = static_cast<const unsigned char*>(image);
  if (bytes == nullptr) return out;
  if (read<uint32_t>(bytes) == kFatbinWrapperMagic) {  // {magic, version, data, filename}
    bytes = static_cast<const unsigned char*>(read<const void*>(bytes + 8));
    size = 0;
    if (bytes == nullptr) return out;
  }
  if (read<uint32_t>(bytes) == kFatbinMagic) {
    out.kind = ImageKind::Fatbin;
    fatbin_entries(bytes, size != 0 ? size : 16 + read<uint64_t>(bytes + 8), with_names, out);
  } else if (std::memcmp(bytes, ELFMAG, SELFMAG) == 0) {
    out.kind = ImageKind::Cubin;
    const size_t known = size != 0 ? size : std::min(elf_size(bytes), kUnboundedElf);
    if (with_names) elf_functions(bytes, known, out);
    out.resources = cubin_resources(bytes, known);
  } else {
    out.kind = ImageKind::Ptx;
    const char* text = reinterpret_cast<const char*>(bytes);
    if (with_names) ptx_entries(text, size != 0 ? strnlen(text, size) : std::strlen(text), out);
  }
  return out;
}

}  // namespace

ImageKernels kernels_in_image(const void* image, size_t size) { return read_image(image, size, true); }

ImageResources resources_in_image(const void* image) { return read_image(image, 0, false).resources; }

}  // namespace devsim
