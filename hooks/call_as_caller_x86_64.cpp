// x86-64's half of the dlopen detour (hooks/call_as_caller_arch.h): the return address is the
// `ret` that ends crtn's epilogue of _fini (or _init), which returns straight to the trampoline.
#if defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>

#include "hooks/call_as_caller_arch.h"

// profagent_call_via_return(file = %rdi, mode = %esi, real = %rdx, ret = %rcx): `ret` is the
// address of a `ret` instruction, which returns to label 1 pushed just above it. The stack is
// laid out as a call would leave it (16-byte alignment at entry + 8).
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

namespace profagent::hooks::detour {
namespace {

// crtn's epilogue of _init and _fini: `add $8, %rsp; ret` (the `ret` is what we return through).
constexpr unsigned char kEpilogue[] = {0x48, 0x83, 0xc4, 0x08, 0xc3};
// _fini whole: [endbr64] sub $8,%rsp; add $8,%rsp; ret
constexpr unsigned char kEndbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
constexpr unsigned char kFiniBody[] = {0x48, 0x83, 0xec, 0x08, 0x48, 0x83, 0xc4, 0x08, 0xc3};
constexpr size_t kInitScan = 48;  // _init: endbr, sub, the __gmon_start__ test and call, epilogue

}  // namespace

// The `ret` of _fini: its whole body must match, so the byte is an instruction boundary.
const void* fini_return(const Segment& segment, ElfW(Addr) fini) noexcept {
  if (bytes_at(segment, fini, kEndbr, sizeof kEndbr)) fini += sizeof kEndbr;
  if (!bytes_at(segment, fini, kFiniBody, sizeof kFiniBody)) return nullptr;
  return reinterpret_cast<const void*>(fini + sizeof kFiniBody - 1);
}

// The `ret` of _init: the last epilogue within its first bytes, starting like _fini.
const void* init_return(const Segment& segment, ElfW(Addr) init) noexcept {
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

bool returns_checked() noexcept {
  static const bool active = [] {
    constexpr int kArchShstkStatus = 0x5005;  // arch_prctl(ARCH_SHSTK_STATUS), Linux 6.6+
    unsigned long features = 0;
    return syscall(SYS_arch_prctl, kArchShstkStatus, &features) == 0 && (features & 1) != 0;
  }();
  return active;
}

}  // namespace profagent::hooks::detour
#endif  // __x86_64__
