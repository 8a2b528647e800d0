#include "hooks/call_as_caller.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

// void* profagent_call_via_return(const char* file, int mode, DlopenFn real, const void* ret)
// Enters `real(file, mode)` with `ret` as its return address; `ret` must be the address of a
// `ret` instruction, which then returns here. The stack is laid out as a call would leave it
// (16-byte alignment at entry + 8), and our own frame has CFI, so unwinding from the code
// after the detour is exact.
asm(R"(
  .text
  .p2align 4
  .globl profagent_call_via_return
  .hidden profagent_call_via_return
  .type profagent_call_via_return, @function
profagent_call_via_return:
  .cfi_startproc
  pushq %rbp
  .cfi_def_cfa_offset 16
  .cfi_offset %rbp, -16
  movq %rsp, %rbp
  .cfi_def_cfa_register %rbp
  subq $8, %rsp
  leaq 1f(%rip), %rax
  pushq %rax
  pushq %rcx
  jmpq *%rdx
1:
  leave
  .cfi_def_cfa %rsp, 8
  ret
  .cfi_endproc
  .size profagent_call_via_return, .-profagent_call_via_return
)");

extern "C" void* profagent_call_via_return(const char* file, int mode, profagent::hooks::DlopenFn real,
                                           const void* ret);

namespace profagent::hooks {
namespace {

std::atomic<uint64_t> g_misses{0};
std::atomic<DetourReporter> g_reporter{nullptr};

// crtn's epilogue of _init and _fini: `add $8, %rsp; ret` (the `ret` is what we return through).
constexpr unsigned char kEpilogue[] = {0x48, 0x83, 0xc4, 0x08, 0xc3};
// _fini whole: [endbr64] sub $8,%rsp; add $8,%rsp; ret
constexpr unsigned char kEndbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
constexpr unsigned char kFiniBody[] = {0x48, 0x83, 0xec, 0x08, 0x48, 0x83, 0xc4, 0x08, 0xc3};
constexpr size_t kInitScan = 48;  // _init: endbr, sub, the __gmon_start__ test and call, epilogue

bool shadow_stack_active() noexcept {
  static const bool active = [] {
    constexpr int kArchShstkStatus = 0x5005;  // arch_prctl(ARCH_SHSTK_STATUS), Linux 6.6+
    unsigned long features = 0;
    return syscall(SYS_arch_prctl, kArchShstkStatus, &features) == 0 && (features & 1) != 0;
  }();
  return active;
}

struct Segment {
  ElfW(Addr) begin = 0;
  ElfW(Addr) end = 0;
};

// The executable PT_LOAD of the object `map` that holds `at` (empty if none).
Segment executable_segment(const link_map* map, ElfW(Addr) at) noexcept {
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

bool bytes_at(const Segment& segment, ElfW(Addr) at, const unsigned char* bytes, size_t n) noexcept {
  return at >= segment.begin && at + n <= segment.end && std::memcmp(reinterpret_cast<const void*>(at), bytes, n) == 0;
}

// The `ret` of _fini: its whole body must match, so the byte is an instruction boundary.
const void* fini_return(const link_map* map, ElfW(Addr) fini) noexcept {
  const Segment segment = executable_segment(map, fini);
  if (bytes_at(segment, fini, kEndbr, sizeof kEndbr)) fini += sizeof kEndbr;
  if (!bytes_at(segment, fini, kFiniBody, sizeof kFiniBody)) return nullptr;
  return reinterpret_cast<const void*>(fini + sizeof kFiniBody - 1);
}

// The `ret` of _init: the last epilogue within its first bytes, starting like _fini.
const void* init_return(const link_map* map, ElfW(Addr) init) noexcept {
  const Segment segment = executable_segment(map, init);
  ElfW(Addr) body = init;
  if (bytes_at(segment, body, kEndbr, sizeof kEndbr)) body += sizeof kEndbr;
  if (!bytes_at(segment, body, kFiniBody, 4)) return nullptr;  // sub $8, %rsp
  for (ElfW(Addr) at = body + 4; at + sizeof kEpilogue <= body + kInitScan; ++at) {
    if (bytes_at(segment, at, kEpilogue, sizeof kEpilogue)) {
      return reinterpret_cast<const void*>(at + sizeof kEpilogue - 1);
    }
  }
  return nullptr;
}

// glibc leaves DT_INIT/DT_FINI as offsets from the load address (it relocates other d_ptr
// entries in place); the vDSO and non-PIE programs have absolute values.
ElfW(Addr) code_address(const link_map* map, ElfW(Addr) value) noexcept {
  return value < map->l_addr ? map->l_addr + value : value;
}

const void* return_instruction_of(const link_map* map) noexcept {
  const void* init = nullptr;
  for (const ElfW(Dyn)* dyn = map->l_ld; dyn != nullptr && dyn->d_tag != DT_NULL; ++dyn) {
    if (dyn->d_tag == DT_FINI) {
      if (const void* found = fini_return(map, code_address(map, dyn->d_un.d_ptr))) return found;
    } else if (dyn->d_tag == DT_INIT) {
      init = init_return(map, code_address(map, dyn->d_un.d_ptr));
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
  const void* ret = (map == nullptr || shadow_stack_active()) ? nullptr : return_instruction_of(map);
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
