#include "hooks/diopi/got_patch.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "collector/api.h"

namespace profagent::hooks::diopi {
namespace {

// One loaded object as dl_iterate_phdr described it.
struct LoadedObject {
  ElfW(Addr) base = 0;
  std::string name;  // "" for the main program; copied: the loader frees its own at unload
  const ElfW(Phdr)* phdr = nullptr;
  ElfW(Half) phnum = 0;
  unsigned long long unloads = 0;  // the loader's count of unloads when it was listed
};

// What the dynamic section says about its relocations.
struct DynamicView {
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const ElfW(Rela)* tables[2] = {nullptr, nullptr};  // DT_JMPREL, DT_RELA
  size_t sizes[2] = {0, 0};
  ElfW(Addr) relro_begin = 0;
  ElfW(Addr) relro_end = 0;
};

constexpr size_t kMaxObjects = 4096;

// The relocations that fill an imported function's GOT slot: through the PLT (JUMP_SLOT) and
// for its address taken (GLOB_DAT). Both architectures use RELA tables.
#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#else
#error "DIOPI GOT patching knows the relocations of x86-64 and aarch64 only"
#endif

using ObjectList = std::vector<LoadedObject>;

// Lock order: loader's lock (dl_iterate_phdr's) -> g_scanned_mutex | g_relro_mutex. Ours are
// leaves, never held together, and NEITHER is held across a call into the loader
// (dl_iterate_phdr, dlopen, dlsym, dladdr, dlinfo). A library constructor runs under the
// loader's lock and may call dlopen, whose hook rescans: had a scan held our lock while asking
// the loader for its lock, the two threads would wait for each other forever. So the record of
// scanned objects is read and updated in short critical sections, and two threads may patch
// the same new object at once: patching a slot is idempotent (an already wrapped slot is left
// alone, copy_for() agrees on the copy), and the RELRO write is serialised so one thread's
// mprotect(PROT_READ) cannot land between another's mprotect(PROT_WRITE) and its store.
// An object scanned, and how many unloads the loader had made when it was listed: an object
// unloaded and another (or the same) loaded at the same address has the same identity, and a
// scan may list it before the dlclose hook of the unloading thread has forgotten the old one.
// A record is only trusted while the unload count is still the one it was taken at.
struct Scanned {
  uintptr_t id;
  unsigned long long unloads;
};
std::mutex g_scanned_mutex;
Scanned g_scanned[kMaxObjects];  // objects already scanned (under g_scanned_mutex)
size_t g_scanned_count = 0;
std::mutex g_relro_mutex;  // one RELRO page made writable, written and sealed at a time

// This object's ELF header, which the linker places at the start of its first segment: its
// address is the object's base (what dladdr reports as dli_fbase), known without asking the
// loader (dladdr walks the symbol tables: a cost at every start-up).
extern "C" const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

const void* own_base() noexcept { return &__ehdr_start; }

bool is_ours(const void* address) noexcept {
  Dl_info info{};
  return address != nullptr && dladdr(address, &info) != 0 && info.dli_fbase == own_base();
}

int list_object(dl_phdr_info* info, size_t, void* data) noexcept {
  auto& list = *static_cast<ObjectList*>(data);
  if (list.size() == kMaxObjects) return 1;
  try {
    list.push_back({info->dlpi_addr, info->dlpi_name, info->dlpi_phdr, info->dlpi_phnum, info->dlpi_subs});
  } catch (const std::bad_alloc&) {
    return 1;  // out of memory: the objects listed so far are scanned, the rest at the next load
  }
  return 0;
}

// The loaded objects, listed with no lock of ours held (dl_iterate_phdr takes the loader's).
ObjectList loaded_objects() noexcept {
  ObjectList list;
  try {
    list.reserve(256);
  } catch (const std::bad_alloc&) {
    return list;
  }
  dl_iterate_phdr(list_object, &list);
  return list;
}

// glibc relocates most d_ptr entries in place; the vDSO's (and some ports') are offsets.
template <typename T>
const T* dyn_pointer(const LoadedObject& object, ElfW(Addr) value) noexcept {
  return reinterpret_cast<const T*>(value < object.base ? object.base + value : value);
}

const ElfW(Dyn)* dynamic_section(const LoadedObject& object, DynamicView& view) noexcept {
  const ElfW(Dyn)* dynamic = nullptr;
  for (ElfW(Half) i = 0; i < object.phnum; ++i) {
    const ElfW(Phdr)& ph = object.phdr[i];
    if (ph.p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(object.base + ph.p_vaddr);
    if (ph.p_type == PT_GNU_RELRO) {
      view.relro_begin = object.base + ph.p_vaddr;
      view.relro_end = view.relro_begin + ph.p_memsz;
    }
  }
  return dynamic;
}

bool read_dynamic(const LoadedObject& object, DynamicView& view) noexcept {
  const ElfW(Dyn)* dyn = dynamic_section(object, view);
  if (dyn == nullptr) return false;
  bool plt_is_rela = true;
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    const ElfW(Addr) value = dyn->d_un.d_ptr;
    switch (dyn->d_tag) {
      case DT_SYMTAB: view.symtab = dyn_pointer<ElfW(Sym)>(object, value); break;
      case DT_STRTAB: view.strtab = dyn_pointer<char>(object, value); break;
      case DT_JMPREL: view.tables[0] = dyn_pointer<ElfW(Rela)>(object, value); break;
      case DT_PLTRELSZ: view.sizes[0] = dyn->d_un.d_val; break;
      case DT_RELA: view.tables[1] = dyn_pointer<ElfW(Rela)>(object, value); break;
      case DT_RELASZ: view.sizes[1] = dyn->d_un.d_val; break;
      case DT_PLTREL: plt_is_rela = dyn->d_un.d_val == DT_RELA; break;
      default: break;
    }
  }
  if (!plt_is_rela) view.tables[0] = nullptr;  // x86-64 and aarch64 use RELA only
  return view.symtab != nullptr && view.strtab != nullptr;
}

bool inside(const LoadedObject& object, const void* address) noexcept {
  const auto at = reinterpret_cast<ElfW(Addr)>(address);
  for (ElfW(Half) i = 0; i < object.phnum; ++i) {
    const ElfW(Phdr)& ph = object.phdr[i];
    const ElfW(Addr) begin = object.base + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && at >= begin && at < begin + ph.p_memsz) return true;
  }
  return false;
}

// Our own object's PT_LOAD ranges, found once outside the loader's lock (dladdr takes it):
// inside a dl_iterate_phdr callback, "is this address ours" must not ask the loader.
struct OwnRanges {
  ElfW(Addr) begin[8] = {};
  ElfW(Addr) end[8] = {};
  ElfW(Addr) base = 0;
  int count = 0;
};
std::atomic<const OwnRanges*> g_own_ranges{nullptr};

int find_own_ranges(dl_phdr_info* info, size_t, void* data) noexcept {
  auto& ranges = *static_cast<OwnRanges*>(data);
  if (reinterpret_cast<const void*>(info->dlpi_addr) != own_base()) return 0;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum && ranges.count < 8; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    ranges.begin[ranges.count] = info->dlpi_addr + ph.p_vaddr;
    ranges.end[ranges.count++] = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
  }
  ranges.base = info->dlpi_addr;
  return 1;
}

// Called with no lock held; racing first calls build equal copies (one is leaked).
const OwnRanges* own_ranges() noexcept {
  if (const OwnRanges* known = g_own_ranges.load(std::memory_order_acquire)) return known;
  auto* ranges = new (std::nothrow) OwnRanges;
  if (ranges == nullptr || own_base() == nullptr) return nullptr;
  dl_iterate_phdr(find_own_ranges, ranges);
  const OwnRanges* expected = nullptr;
  if (!g_own_ranges.compare_exchange_strong(expected, ranges, std::memory_order_acq_rel)) return expected;
  return ranges;
}

bool in_own_ranges(const OwnRanges& ranges, const void* address) noexcept {
  const auto at = reinterpret_cast<ElfW(Addr)>(address);
  for (int i = 0; i < ranges.count; ++i) {
    if (at >= ranges.begin[i] && at < ranges.end[i]) return true;
  }
  return false;
}

// dlsym in the object's own lookup scope (itself, then its dependencies).
void* lookup_from(const std::string& object_name, const char* symbol) noexcept {
  void* handle = dlopen(object_name.empty() ? nullptr : object_name.c_str(), RTLD_NOLOAD | RTLD_LAZY);
  if (handle == nullptr) return nullptr;
  void* address = dlsym(handle, symbol);
  dlclose(handle);  // drops only the reference RTLD_NOLOAD took
  return is_ours(address) ? nullptr : address;
}

bool store_slot(const DynamicView& view, void** slot, void* wrapper) noexcept {
  const auto at = reinterpret_cast<ElfW(Addr)>(slot);
  if (at < view.relro_begin || at >= view.relro_end) {
    __atomic_store_n(slot, wrapper, __ATOMIC_RELEASE);
    return true;
  }
  const long page_size = sysconf(_SC_PAGESIZE);
  void* page = reinterpret_cast<void*>(at & ~ElfW(Addr)(page_size - 1));
  std::lock_guard<std::mutex> lock(g_relro_mutex);  // no loader call below
  if (mprotect(page, size_t(page_size), PROT_READ | PROT_WRITE) != 0) return false;
  __atomic_store_n(slot, wrapper, __ATOMIC_RELEASE);
  mprotect(page, size_t(page_size), PROT_READ);  // RELRO is read-only after relocation
  return true;
}

// The wrapper copy that forwards to `real`: one already bound to it, else the first free one.
void* copy_for(const PatchTarget& target, void* real) noexcept {
  for (size_t i = 0; i < target.copies; ++i) {
    void* known = nullptr;
    if (target.reals[i].compare_exchange_strong(known, real, std::memory_order_acq_rel) || known == real) {
      return target.wrappers[i];
    }
  }
  return nullptr;
}

uintptr_t identity(const LoadedObject& object) noexcept {
  return uintptr_t(object.base) ^ (uintptr_t(object.phdr) << 1);
}

// A DIOPI slot of one listed object, patched once the listing is over. dl_iterate_phdr lists
// an object as soon as the loader has mapped it, BEFORE it is relocated: a scan running while
// another thread's dlopen is between the two would read link-time values (a PLT offset, or 0).
// Taking such a value for the real target, and storing a wrapper there, is what the relocation
// then breaks: a lazy slot is relocated as `*slot += load address`, which turns our wrapper's
// address into a wild pointer the program jumps through. So slots are read and written only
// under a reference to their object (dlopen RTLD_NOLOAD), which waits until a load in progress
// on another thread has ended (the loader holds its lock from mapping to the end of dlopen).
struct DiopiSlot {
  void** slot;
  const char* symbol;  // in the object's .dynstr, mapped while the object is
  PatchTarget target;
};

// A listed object with DIOPI slots, not scanned before.
struct PendingObject {
  LoadedObject object;
  DynamicView view;
  std::vector<DiopiSlot> slots;
};

// One scan: what the dl_iterate_phdr callback found.
struct ScanPass {
  TargetLookup lookup;
  const OwnRanges* own;
  PatchStats stats;
  std::vector<PendingObject> pending;
  std::vector<Scanned> scanned;
};

void store_wrapper(void** slot, const DynamicView& view, const PatchTarget& target, void* real,
                   PatchStats& stats) noexcept {
  void* wrapper = copy_for(target, real);
  if (wrapper == nullptr) {
    ++stats.slots_conflict;  // more distinct definitions than copies: leave it unwrapped
    return;
  }
  if (store_slot(view, slot, wrapper)) {
    ++stats.slots_patched;
  } else {
    ++stats.slots_failed;
  }
}

// Runs inside the dl_iterate_phdr callback: reads the object's relocation tables (file data,
// the same before relocation) and asks the loader nothing.
void list_diopi_slots(const LoadedObject& object, ScanPass& pass) {
  PendingObject pending{object, {}, {}};
  if (!read_dynamic(object, pending.view)) return;
  ++pass.stats.objects_scanned;
  const DynamicView& view = pending.view;
  for (int t = 0; t < 2; ++t) {
    const size_t count = view.tables[t] == nullptr ? 0 : view.sizes[t] / sizeof(ElfW(Rela));
    for (size_t i = 0; i < count; ++i) {
      const ElfW(Rela)& rela = view.tables[t][i];
      const auto type = ELF64_R_TYPE(rela.r_info);
      if (type != kJumpSlot && type != kGlobDat) continue;
      const char* symbol = view.strtab + view.symtab[ELF64_R_SYM(rela.r_info)].st_name;
      // The first letter first: every process scans its start-up objects (libc's few hundred
      // slots included), and a call to strncmp per slot was a third of the scan.
      if (symbol[0] != 'd' || std::strncmp(symbol, "diopi", 5) != 0) continue;
      const PatchTarget target = pass.lookup(symbol);
      if (target.wrappers == nullptr) continue;
      pending.slots.push_back({reinterpret_cast<void**>(object.base + rela.r_offset), symbol, target});
    }
  }
  if (pending.slots.empty()) {
    pass.scanned.push_back({identity(object), object.unloads});  // nothing to patch
  } else {
    pass.pending.push_back(std::move(pending));
  }
}

// One slot of a relocated object that a reference keeps loaded. Its value is the real target,
// unless the slot is still bound lazily (it points into its own object's PLT stub): then the
// definition is looked up by name in the object's own scope, which finds it even when
// everything was loaded RTLD_LOCAL. A null slot is a weak reference nothing defines: left null.
void patch_slot(void* handle, const PendingObject& pending, const DiopiSlot& diopi, const OwnRanges& own,
                PatchStats& stats) noexcept {
  void* value = __atomic_load_n(diopi.slot, __ATOMIC_ACQUIRE);
  for (size_t i = 0; i < diopi.target.copies; ++i) {
    if (value == diopi.target.wrappers[i]) return;  // patched before (JUMP_SLOT and GLOB_DAT share names)
  }
  if (value != nullptr && inside(pending.object, value)) value = dlsym(handle, diopi.symbol);
  if (value == nullptr || in_own_ranges(own, value)) {
    ++stats.slots_null;
    return;
  }
  store_wrapper(diopi.slot, pending.view, diopi.target, value, stats);
}

// Skipped, and not recorded as scanned, when the object's name now denotes no object or one
// at another address (the listed one was unloaded, or its load failed; a thread that loads it
// again scans it then).
void patch_pending_object(const PendingObject& pending, const OwnRanges& own, ScanPass& pass) noexcept {
  const std::string& name = pending.object.name;
  void* handle = dlopen(name.empty() ? nullptr : name.c_str(), RTLD_NOLOAD | RTLD_LAZY);
  if (handle == nullptr) return;
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_addr == pending.object.base) {
    for (const DiopiSlot& diopi : pending.slots) patch_slot(handle, pending, diopi, own, pass.stats);
    try {
      pass.scanned.push_back({identity(pending.object), pending.object.unloads});
    } catch (const std::bad_alloc&) {
      // not recorded: scanned again at the next load, which finds its slots patched
    }
  }
  dlclose(handle);  // drops only the reference RTLD_NOLOAD took
}

bool scanned_before(const LoadedObject& object) noexcept {
  const uintptr_t id = identity(object);
  std::lock_guard<std::mutex> lock(g_scanned_mutex);
  for (size_t i = 0; i < g_scanned_count; ++i) {
    if (g_scanned[i].id == id) return g_scanned[i].unloads == object.unloads;
  }
  return false;
}

void remember_scanned(const Scanned& scanned) noexcept {
  std::lock_guard<std::mutex> lock(g_scanned_mutex);
  for (size_t i = 0; i < g_scanned_count; ++i) {
    if (g_scanned[i].id != scanned.id) continue;
    if (g_scanned[i].unloads < scanned.unloads) g_scanned[i] = scanned;  // never back to an older listing
    return;
  }
  if (g_scanned_count < kMaxObjects) g_scanned[g_scanned_count++] = scanned;
}


// The loader keeps every object it lists here mapped until the callback returns (an unload
// takes the same lock before unmapping), so relocation tables are read right here; the slots
// are patched after the listing (patch_pending_object).
int scan_object(dl_phdr_info* info, size_t, void* data) noexcept {
  auto& pass = *static_cast<ScanPass*>(data);
  if (info->dlpi_addr == pass.own->base) return 0;  // never patch libprofagent itself
  try {
    const LoadedObject object{info->dlpi_addr, info->dlpi_name, info->dlpi_phdr, info->dlpi_phnum, info->dlpi_subs};
    if (scanned_before(object)) return 0;
    list_diopi_slots(object, pass);
  } catch (const std::bad_alloc&) {
    return 1;  // out of memory: what is not recorded as scanned is scanned at the next load
  }
  return 0;
}

}  // namespace

// An object is recorded as scanned only once its slots are patched, so a thread whose dlopen
// loaded it never returns before they are (at worst it patches them alongside another scan).
PatchStats patch_new_objects(TargetLookup lookup) noexcept {
  collector::AgentBusy busy;
  const OwnRanges* own = own_ranges();
  if (own == nullptr) return {};
  ScanPass pass{lookup, own, {}, {}, {}};
  dl_iterate_phdr(scan_object, &pass);
  for (const PendingObject& pending : pass.pending) patch_pending_object(pending, *own, pass);
  for (const Scanned& scanned : pass.scanned) remember_scanned(scanned);
  return pass.stats;
}

void forget_unloaded_objects() noexcept {
  collector::AgentBusy busy;
  const ObjectList list = loaded_objects();
  std::lock_guard<std::mutex> lock(g_scanned_mutex);  // no loader call below
  size_t kept = 0;
  for (size_t i = 0; i < g_scanned_count; ++i) {
    for (const LoadedObject& object : list) {
      if (identity(object) == g_scanned[i].id) {
        g_scanned[kept++] = g_scanned[i];
        break;
      }
    }
  }
  g_scanned_count = kept;
}

void* find_definition(const char* symbol) noexcept {
  collector::AgentBusy busy;
  for (const LoadedObject& object : loaded_objects()) {
    if (is_ours(object.phdr)) continue;
    if (void* address = lookup_from(object.name, symbol)) return address;
  }
  return nullptr;
}

}  // namespace profagent::hooks::diopi
