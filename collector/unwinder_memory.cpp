#include "collector/unwinder_memory.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "collector/api.h"
#include "collector/thread_buffer.h"

namespace profagent::collector {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT, kGlobDat = R_X86_64_GLOB_DAT;
#define PROFAGENT_UNW_ARCH "x86_64"
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT, kGlobDat = R_AARCH64_GLOB_DAT;
#define PROFAGENT_UNW_ARCH "aarch64"
#endif

// libunwind's import of pipe2, answered here: no pipe, so no descriptor.
int no_pipe(int*, int) {
  errno = EMFILE;
  return -1;
}

// ---- the import slot of pipe2 ----------------------------------------------------------------

struct Relocations {
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const ElfW(Rela)* tables[2] = {nullptr, nullptr};  // DT_JMPREL, DT_RELA
  size_t sizes[2] = {0, 0};
};

Relocations read_relocations(const link_map* object) noexcept {
  Relocations r;
  for (const ElfW(Dyn)* dyn = object->l_ld; dyn->d_tag != DT_NULL; ++dyn) {
    const ElfW(Addr) value = dyn->d_un.d_ptr;  // relocated by the loader for a loaded library
    switch (dyn->d_tag) {
      case DT_SYMTAB: r.symtab = reinterpret_cast<const ElfW(Sym)*>(value); break;
      case DT_STRTAB: r.strtab = reinterpret_cast<const char*>(value); break;
      case DT_JMPREL: r.tables[0] = reinterpret_cast<const ElfW(Rela)*>(value); break;
      case DT_PLTRELSZ: r.sizes[0] = dyn->d_un.d_val; break;
      case DT_RELA: r.tables[1] = reinterpret_cast<const ElfW(Rela)*>(value); break;
      case DT_RELASZ: r.sizes[1] = dyn->d_un.d_val; break;
      default: break;
    }
  }
  return r;
}

// Where `object` keeps the address of the function `symbol` it imports; nullptr if it does not.
void** import_slot(const link_map* object, const char* symbol) noexcept {
  const Relocations r = read_relocations(object);
  if (r.symtab == nullptr || r.strtab == nullptr) return nullptr;
  for (int t = 0; t < 2; ++t) {
    const size_t count = r.tables[t] == nullptr ? 0 : r.sizes[t] / sizeof(ElfW(Rela));
    for (size_t i = 0; i < count; ++i) {
      const ElfW(Rela)& rela = r.tables[t][i];
      const uint32_t type = ELF64_R_TYPE(rela.r_info);
      if (type != kJumpSlot && type != kGlobDat) continue;
      if (std::strcmp(r.strtab + r.symtab[ELF64_R_SYM(rela.r_info)].st_name, symbol) != 0) continue;
      return reinterpret_cast<void**>(object->l_addr + rela.r_offset);
    }
  }
  return nullptr;
}

// The read-only-after-relocation range (PT_GNU_RELRO) of the object loaded at `base`.
struct Range {
  uintptr_t begin = 0, end = 0;
};
Range relro_of(uintptr_t base) noexcept {
  struct Search {
    uintptr_t base;
    Range range;
  } search{base, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        if (info->dlpi_addr != s->base) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_GNU_RELRO) continue;
          s->range = {info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz};
        }
        return 1;
      },
      &search);
  return search.range;
}

bool write_slot(void** slot, void* value, const Range& relro) noexcept {
  const auto at = reinterpret_cast<uintptr_t>(slot);
  if (at < relro.begin || at >= relro.end) {
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    return true;
  }
  const uintptr_t page_size = uintptr_t(sysconf(_SC_PAGESIZE));
  void* page = reinterpret_cast<void*>(at & ~(page_size - 1));
  if (mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) return false;
  __atomic_store_n(slot, value, __ATOMIC_RELEASE);
  mprotect(page, page_size, PROT_READ);
  return true;
}

// ---- reads -----------------------------------------------------------------------------------

using AccessMem = int (*)(void* space, uint64_t address, uint64_t* value, int write, void* arg);
// The leading members of libunwind's public unw_accessors_t (libunwind-common.h), in order.
struct UnwAccessors {
  void* find_proc_info;
  void* put_unwind_info;
  void* get_dyn_info_list_addr;
  AccessMem access_mem;
};

// One word of this process read by the kernel: fails (EFAULT) instead of faulting on an
// unmapped or unreadable address.
bool kernel_read(uint64_t address, uint64_t* value) noexcept {
  iovec local{value, sizeof *value};
  iovec remote{reinterpret_cast<void*>(address), sizeof *value};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == ssize_t(sizeof *value);
}

bool remembered(const ReadablePages& pages, uintptr_t page) noexcept {
  for (uintptr_t known : pages.page) {
    if (known == page) return true;
  }
  return false;
}

uintptr_t g_page_mask = ~uintptr_t(4095);

// Every access of libunwind's local address space. A read of a word on one page: remembered
// pages are read directly (the pages libunwind reads on every
// unwind: the outermost frames' stack), others through the kernel.
int read_memory(void*, uint64_t address, uint64_t* value, int write, void*) {
  if (write) {  // libunwind's own context (its registers live in a ucontext it holds)
    *reinterpret_cast<uint64_t*>(address) = *value;
    return 0;
  }
  const uintptr_t page = uintptr_t(address) & g_page_mask;
  const bool one_page = ((uintptr_t(address) + sizeof *value - 1) & g_page_mask) == page;
  auto* buffer = static_cast<ThreadBuffer*>(tls_cursor);
  if (buffer != nullptr && one_page && page != 0 && remembered(buffer->readable, page)) {
    *value = *reinterpret_cast<const uint64_t*>(address);
    return 0;
  }
  const int saved = errno;
  const bool ok = kernel_read(address, value);
  errno = saved;
  if (!ok) return -1;
  if (buffer != nullptr && one_page) {
    ReadablePages& pages = buffer->readable;
    pages.page[pages.next] = page;
    pages.next = uint8_t((pages.next + 1) % ReadablePages::kPages);
  }
  return 0;
}

}  // namespace

namespace {

// The object that defines unw_backtrace: libunwind itself, also when the handle is the agent's
// libprofagent_unwind.so, which only depends on it (the handle's own link map would be the
// helper's, which imports no pipe2).
link_map* libunwind_object(void* libunwind_handle) noexcept {
  void* symbol = dlsym(libunwind_handle, "unw_backtrace");
  Dl_info info{};
  link_map* object = nullptr;
  if (symbol == nullptr || dladdr1(symbol, &info, reinterpret_cast<void**>(&object), RTLD_DL_LINKMAP) == 0) {
    return nullptr;
  }
  return object;
}

bool keep_off_descriptors(void* libunwind_handle, std::string& why) noexcept {
  link_map* object = libunwind_object(libunwind_handle);
  if (object == nullptr) return why = "libunwind's link map is not available", false;
  void** slot = import_slot(object, "pipe2");
  if (slot == nullptr) return true;  // it opens no pipe
  if (!write_slot(slot, reinterpret_cast<void*>(&no_pipe), relro_of(object->l_addr))) {
    return why = "libunwind's pipe2 import could not be redirected", false;
  }
  return true;
}

bool route_reads(void* libunwind_handle, std::string& why) noexcept {
  using GetAccessors = UnwAccessors* (*)(void* space);
  auto get = reinterpret_cast<GetAccessors>(dlsym(libunwind_handle, "_U" PROFAGENT_UNW_ARCH "_get_accessors"));
  if (get == nullptr) get = reinterpret_cast<GetAccessors>(dlsym(libunwind_handle, "_UL" PROFAGENT_UNW_ARCH "_get_accessors"));
  auto* space = static_cast<void**>(dlsym(libunwind_handle, "_UL" PROFAGENT_UNW_ARCH "_local_addr_space"));
  // get_accessors initialises libunwind (with no pipe, after keep_off_descriptors).
  UnwAccessors* accessors = get != nullptr && space != nullptr && *space != nullptr ? get(*space) : nullptr;
  if (accessors == nullptr) return why = "libunwind's accessors are not found", false;
  g_page_mask = ~(uintptr_t(sysconf(_SC_PAGESIZE)) - 1);
  __atomic_store_n(&accessors->access_mem, &read_memory, __ATOMIC_RELEASE);
  return true;
}

}  // namespace

bool prepare_unwinder(void* libunwind_handle, std::string& why) noexcept {
#if defined(PROFAGENT_UNW_ARCH)
  uint64_t probe = 1, copy = 0;
  const int saved = errno;
  const bool readable = kernel_read(uint64_t(uintptr_t(&probe)), &copy) && copy == probe;
  errno = saved;
  if (!readable) return why = "process_vm_readv is refused here (a seccomp filter?)", false;
  return keep_off_descriptors(libunwind_handle, why) && route_reads(libunwind_handle, why);
#else
  return why = "stacks are not supported on this architecture", false;
#endif
}

}  // namespace profagent::collector
