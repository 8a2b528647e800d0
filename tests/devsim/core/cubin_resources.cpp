#include "cubin_resources.h"

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace devsim {
namespace {

constexpr uint8_t kFormatSized = 4;  // EIFMT_SVAL; 1-3 carry a 16-bit value in place
constexpr uint8_t kMaxThreads = 0x05, kReqNtid = 0x10, kFrameSize = 0x11, kParamSize = 0x19,
                  kRegCount = 0x2f;

template <typename T>
T read(const unsigned char* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

struct Attribute {
  uint8_t code;
  uint16_t value;                   // formats 1-3
  const unsigned char* data;        // format 4
  uint16_t size;                    // format 4
};

std::vector<Attribute> attributes(const unsigned char* at, size_t size) {
  std::vector<Attribute> out;
  for (size_t pos = 0; pos + 4 <= size;) {
    const uint8_t format = at[pos], code = at[pos + 1];
    const uint16_t word = read<uint16_t>(at + pos + 2);
    if (format != kFormatSized) {
      out.push_back(Attribute{code, word, nullptr, 0});
      pos += 4;
      continue;
    }
    if (pos + 4 + word > size) break;
    out.push_back(Attribute{code, 0, at + pos + 4, word});
    pos += 4 + word;
  }
  return out;
}

class Cubin {
 public:
  Cubin(const unsigned char* elf, size_t size) : elf_(elf), size_(size) {}

  bool valid() const {
    if (size_ < sizeof(Elf64_Ehdr) || std::memcmp(elf_, ELFMAG, SELFMAG) != 0 || elf_[EI_CLASS] != ELFCLASS64) {
      return false;
    }
    const auto h = header();
    return h.e_shentsize == sizeof(Elf64_Shdr) && h.e_shoff != 0 && h.e_shstrndx < h.e_shnum &&
           h.e_shoff + uint64_t(h.e_shnum) * sizeof(Elf64_Shdr) <= size_;
  }
  size_t count() const { return header().e_shnum; }
  Elf64_Shdr section(size_t i) const { return read<Elf64_Shdr>(elf_ + header().e_shoff + i * sizeof(Elf64_Shdr)); }
  bool in_file(const Elf64_Shdr& s) const { return s.sh_type == SHT_NOBITS || s.sh_offset + s.sh_size <= size_; }
  const unsigned char* bytes(const Elf64_Shdr& s) const { return elf_ + s.sh_offset; }
  std::string_view name(const Elf64_Shdr& s) const { return string_at(section(header().e_shstrndx), s.sh_name); }
  // Name of symbol `index` of the symbol table `symtab`.
  std::string_view symbol_name(const Elf64_Shdr& symtab, uint32_t index) const {
    if (symtab.sh_link >= count() || (uint64_t(index) + 1) * sizeof(Elf64_Sym) > symtab.sh_size) return {};
    const auto sym = read<Elf64_Sym>(elf_ + symtab.sh_offset + uint64_t(index) * sizeof(Elf64_Sym));
    return string_at(section(symtab.sh_link), sym.st_name);
  }

 private:
  Elf64_Ehdr header() const { return read<Elf64_Ehdr>(elf_); }
  std::string_view string_at(const Elf64_Shdr& strtab, uint64_t offset) const {
    if (!in_file(strtab) || offset >= strtab.sh_size) return {};
    const char* s = reinterpret_cast<const char*>(elf_ + strtab.sh_offset + offset);
    return std::string_view(s, strnlen(s, strtab.sh_size - offset));
  }
  const unsigned char* elf_;
  size_t size_;
};

bool strip_prefix(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// `.nv.info`: {symbol index, value} pairs per function.
void read_function_table(const Cubin& c, const Elf64_Shdr& info, ImageResources& out) {
  if (info.sh_link >= c.count()) return;
  const Elf64_Shdr symtab = c.section(info.sh_link);
  if (!c.in_file(symtab)) return;
  for (const Attribute& a : attributes(c.bytes(info), info.sh_size)) {
    if (a.size != 8 || (a.code != kRegCount && a.code != kFrameSize)) continue;
    const std::string_view name = c.symbol_name(symtab, read<uint32_t>(a.data));
    if (name.empty()) continue;
    KernelResources& k = out[std::string(name)];
    (a.code == kRegCount ? k.registers : k.local_bytes) = static_cast<int>(read<uint32_t>(a.data + 4));
  }
}

// `.nv.info.<kernel>`: the kernel's own attributes.
void read_kernel_table(const Cubin& c, const Elf64_Shdr& info, KernelResources& k) {
  for (const Attribute& a : attributes(c.bytes(info), info.sh_size)) {
    if (a.code == kParamSize && a.data == nullptr) k.param_bytes = a.value;
    if ((a.code == kMaxThreads || a.code == kReqNtid) && a.size == 12) {
      const uint64_t threads = uint64_t(read<uint32_t>(a.data)) * read<uint32_t>(a.data + 4) * read<uint32_t>(a.data + 8);
      if (threads > 0 && (k.max_threads == 0 || threads < uint64_t(k.max_threads))) k.max_threads = int(threads);
    }
  }
}

// The register count ptxas also writes into the top byte of `.text.<kernel>`'s sh_info, for
// cubins without EIATTR_REGCOUNT.
void read_text_section(const Elf64_Shdr& text, KernelResources& k) {
  if (k.registers < 0 && (text.sh_info >> 24) != 0) k.registers = static_cast<int>(text.sh_info >> 24);
}

}  // namespace

ImageResources cubin_resources(const unsigned char* elf, size_t size) {
  ImageResources out;
  const Cubin c(elf, size);
  if (elf == nullptr || !c.valid()) return out;
  std::vector<std::pair<std::string, Elf64_Shdr>> texts;
  for (size_t i = 0; i < c.count(); ++i) {
    const Elf64_Shdr s = c.section(i);
    std::string_view name = c.name(s);
    if (!c.in_file(s)) continue;
    if (name == ".nv.info") {
      read_function_table(c, s, out);
    } else if (strip_prefix(name, ".nv.info.")) {
      read_kernel_table(c, s, out[std::string(name)]);
    } else if (strip_prefix(name, ".nv.shared.")) {
      out[std::string(name)].static_shared = static_cast<int>(s.sh_size);
    } else if (strip_prefix(name, ".text.")) {
      texts.emplace_back(std::string(name), s);
    }
  }
  for (const auto& [name, text] : texts) read_text_section(text, out[name]);
  return out;
}

}  // namespace devsim
