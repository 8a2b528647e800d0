// GOT patching (exported diopi* symbols would make unimplemented operators look implemented,
// and RTLD_NEXT cannot see RTLD_LOCAL libraries): redirect the imported-function slots
// of loaded objects to our wrappers without exporting any symbol.
//
// For every loaded object not scanned before (never the object holding this code), the
// JUMP_SLOT and GLOB_DAT relocations (R_X86_64_*, R_AARCH64_*) of DT_JMPREL and DT_RELA are
// read with DT_SYMTAB/DT_STRTAB. A slot of a symbol the lookup knows is patched only when it is
// NON-NULL: a null slot is a weak reference nothing defines, and must stay null so the
// framework keeps choosing its fallback for it. The slot's value is the real target, except
// for a lazy JUMP_SLOT that still points into its own object's PLT: then the real target is
// resolved by name with dlsym on a handle of the importing object (dlopen RTLD_NOLOAD), i.e.
// in that object's own lookup scope, which finds the definition even when everything was
// loaded RTLD_LOCAL; no definition means a weak reference left unresolved: not patched.
// RELRO pages are made writable for the store and read-only again.
#pragma once

#include <atomic>
#include <cstdint>

namespace profagent::hooks::diopi {

// The copies of one wrapper and, per copy, where it finds its real target: a slot gets the
// copy whose real target is this slot's (or the first free copy).
inline constexpr size_t kMaxWrapperCopies = 4;
struct PatchTarget {
  void* const* wrappers = nullptr;      // null: not a symbol we wrap
  std::atomic<void*>* reals = nullptr;
  size_t copies = 0;
};
using TargetLookup = PatchTarget (*)(const char* symbol) noexcept;

struct PatchStats {
  uint32_t objects_scanned = 0;
  uint32_t slots_patched = 0;
  uint32_t slots_null = 0;        // weak references left null (operator not implemented)
  uint32_t slots_conflict = 0;    // bound to more distinct definitions than there are copies
  uint32_t slots_failed = 0;      // mprotect refused
};

// Scans the objects not scanned before (never from a hot path). Their relocation tables are
// read inside dl_iterate_phdr, where the loader keeps them mapped; their slots are read and
// patched after it returns, each object held by dlopen(RTLD_NOLOAD) — which waits for a load
// still in progress on another thread, whose slots are not relocated yet — because that
// dlopen inside dl_iterate_phdr could deadlock against a concurrent dlopen. No lock of the
// agent is held across any loader call (got_patch.cpp gives the lock order), so concurrent
// scans may overlap.
PatchStats patch_new_objects(TargetLookup lookup) noexcept;

// Forgets the scanned objects that are no longer loaded (after an unload).
void forget_unloaded_objects() noexcept;

// A definition of `symbol` in the lookup scope of any loaded object except ours (nullptr if
// none): how the installer finds the framework's DIOPI runtime functions under RTLD_LOCAL.
void* find_definition(const char* symbol) noexcept;

}  // namespace profagent::hooks::diopi
