#include "hooks/call_as_caller.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <atomic>
#include <cstring>

#include "hooks/call_as_caller_arch.h"

namespace profagent::hooks {
namespace {

std::atomic<uint64_t> g_misses{0};
std::atomic<DetourReporter> g_reporter{nullptr};

// The executable PT_LOAD of the object `map` that holds `at` (empty if none).
detour::Segment executable_segment(const link_map* map, ElfW(Addr) at) noexcept {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(map->l_ld), &info) == 0 || info.dli_fbase == nullptr) return {};
  const auto* header = static_cast<const ElfW(Ehdr)*>(info.dli_fbase);
  if (std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0) return {};
  const auto* phdr = reinterpret_cast<const ElfW(Phdr)*>(reinterpret_cast<const char*>(header) + header->e_phoff);
  for (ElfW(Half) i = 0; i < header->e_phnum; ++i) {
    if (phdr[i].p_type != PT_LOAD || (phdr[i].p_flags & PF_X) == 0) continue;
    const ElfW(Addr) begin = map->l_addr + phdr[i].p_vaddr;
    if (at >= begin && at < begin + phdr[i].p_memsz) return {begin, begin + phdr[i].p_memsz};
  }
  return {};
}

// glibc leaves DT_INIT/DT_FINI as offsets from the load address (it relocates other d_ptr
// entries in place); the vDSO and non-PIE programs have absolute values.
ElfW(Addr) code_address(const link_map* map, ElfW(Addr) value) noexcept {
  return value < map->l_addr ? map->l_addr + value : value;
}

const void* return_instruction_of(const link_map* map) noexcept {
  const void* init = nullptr;
  for (const ElfW(Dyn)* dyn = map->l_ld; dyn != nullptr && dyn->d_tag != DT_NULL; ++dyn) {
    if (dyn->d_tag != DT_FINI && dyn->d_tag != DT_INIT) continue;
    const ElfW(Addr) at = code_address(map, dyn->d_un.d_ptr);
    const detour::Segment segment = executable_segment(map, at);
    if (dyn->d_tag == DT_FINI) {
      if (const void* found = detour::fini_return(segment, at)) return found;
    } else {
      init = detour::init_return(segment, at);
    }
  }
  return init;
}

// The object glibc will take as the caller: the one holding `caller`, else (JIT code, or no
// object at all) the main program, as glibc does.
const link_map* caller_map(const void* caller) noexcept {
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(caller, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0 && map != nullptr) return map;
  return _r_debug.r_map;  // the main program's link map comes first
}

void count_miss(const link_map* map) noexcept {
  if (g_misses.fetch_add(1, std::memory_order_relaxed) != 0) return;
  const char* object = map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0' ? map->l_name : "the program";
  if (DetourReporter reporter = g_reporter.load(std::memory_order_acquire)) reporter(object);
}

}  // namespace

// Not noexcept: a constructor run by dlopen may be cancelled (see hooks/hook.h).
void* dlopen_as_caller(DlopenFn real, const char* file, int mode, const void* caller) {
  const link_map* map = caller_map(caller);
  const void* ret = (map == nullptr || detour::returns_checked()) ? nullptr : return_instruction_of(map);
  if (ret == nullptr) {
    count_miss(map);
    return real(file, mode);
  }
  return profagent_call_via_return(file, mode, real, ret);
}

void set_detour_reporter(DetourReporter reporter) noexcept {
  g_reporter.store(reporter, std::memory_order_release);
}

uint64_t plain_dlopen_calls() noexcept { return g_misses.load(std::memory_order_relaxed); }

}  // namespace profagent::hooks
