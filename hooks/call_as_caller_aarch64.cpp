// aarch64's half of the dlopen detour (hooks/call_as_caller_arch.h).
//
// A return address on aarch64 is a register (x30), and `ret` jumps to x30 again, so the bare
// `ret` that serves on x86-64 would return to itself. The equivalent is crtn's whole epilogue
// of _fini/_init, `ldp x29, x30, [sp], #16; ret`: it pops a frame pointer and a return address
// from the stack, then returns there. dlopen is entered with x30 = that `ldp` (inside the
// caller's object: what glibc takes as the caller) and the pair it pops on top of the stack
// (our frame pointer and label 1), so dlopen's return comes back to the trampoline.
//
// Shapes accepted (glibc's crti.S/crtn.S for aarch64), instruction words:
//   _fini: [nop | bti c] stp x29,x30,[sp,#-16]!; mov x29,sp; ldp x29,x30,[sp],#16; ret
//   _init: [nop | bti c] stp x29,x30,[sp,#-16]!; mov x29,sp; ...; ldp x29,x30,[sp],#16; ret
// An epilogue that authenticates its return address (autiasp, pointer authentication) is not
// matched: it would reject the unsigned label 1.
#if defined(__aarch64__)
#include <sys/prctl.h>

#include <cstdint>

#include "hooks/call_as_caller_arch.h"

// profagent_call_via_return(file = x0, mode = w1, real = x2, ret = x3). Branches to `real`
// through x16, the register a BTI-guarded function start (bti c) accepts from a `br`. At label
// 1 the epilogue has popped its pair: sp and x29 are this frame's again.
asm(R"(
  .text
  .p2align 2
  .globl profagent_call_via_return
  .hidden profagent_call_via_return
  .type profagent_call_via_return, %function
profagent_call_via_return:
  .cfi_startproc
  stp x29, x30, [sp, #-16]!
  .cfi_def_cfa_offset 16
  .cfi_offset x29, -16
  .cfi_offset x30, -8
  mov x29, sp
  .cfi_def_cfa x29, 16
  adr x9, 1f
  stp x29, x9, [sp, #-16]!
  mov x16, x2
  mov x30, x3
  br x16
1:
  ldp x29, x30, [sp], #16
  .cfi_def_cfa sp, 0
  .cfi_restore x29
  .cfi_restore x30
  ret
  .cfi_endproc
  .size profagent_call_via_return, .-profagent_call_via_return
)");

namespace profagent::hooks::detour {
namespace {

constexpr uint32_t kNop = 0xd503201f;
constexpr uint32_t kBtiC = 0xd503245f;
constexpr uint32_t kPrologue[] = {0xa9bf7bfd, 0x910003fd};  // stp x29, x30, [sp, #-16]!; mov x29, sp
constexpr uint32_t kEpilogue[] = {0xa8c17bfd, 0xd65f03c0};  // ldp x29, x30, [sp], #16; ret
constexpr size_t kInitScan = 64;  // _init: landing pad, prologue, the __gmon_start__ call, epilogue

// The first instruction after the optional landing pad (crti's BTI slot).
ElfW(Addr) after_landing_pad(const Segment& segment, ElfW(Addr) at) noexcept {
  return bytes_at(segment, at, &kNop, 4) || bytes_at(segment, at, &kBtiC, 4) ? at + 4 : at;
}

}  // namespace

// The `ldp` of _fini's epilogue: the whole body must match, so it is an instruction boundary.
const void* fini_return(const Segment& segment, ElfW(Addr) fini) noexcept {
  const ElfW(Addr) body = after_landing_pad(segment, fini);
  if (!bytes_at(segment, body, kPrologue, sizeof kPrologue)) return nullptr;
  const ElfW(Addr) epilogue = body + sizeof kPrologue;
  if (!bytes_at(segment, epilogue, kEpilogue, sizeof kEpilogue)) return nullptr;
  return reinterpret_cast<const void*>(epilogue);
}

// The `ldp` of _init's epilogue: the first one in its first bytes (instructions are 4-byte
// aligned words, so the scan keeps to instruction boundaries).
const void* init_return(const Segment& segment, ElfW(Addr) init) noexcept {
  const ElfW(Addr) body = after_landing_pad(segment, init);
  if (!bytes_at(segment, body, kPrologue, sizeof kPrologue)) return nullptr;
  for (ElfW(Addr) at = body + sizeof kPrologue; at + sizeof kEpilogue <= init + kInitScan; at += 4) {
    if (bytes_at(segment, at, kEpilogue, sizeof kEpilogue)) return reinterpret_cast<const void*>(at);
  }
  return nullptr;
}

// arm64's guarded control stack (GCS, Linux 6.13+) checks every `ret` against the calls made:
// dlopen's return to the epilogue, entered by a branch, would fault.
bool returns_checked() noexcept {
  static const bool active = [] {
    constexpr int kGetShadowStackStatus = 74;  // PR_GET_SHADOW_STACK_STATUS
    constexpr unsigned long kShadowStackEnable = 1;  // PR_SHADOW_STACK_ENABLE
    unsigned long status = 0;
    return prctl(kGetShadowStackStatus, &status, 0, 0, 0) == 0 && (status & kShadowStackEnable) != 0;
  }();
  return active;
}

}  // namespace profagent::hooks::detour
#endif  // __aarch64__
