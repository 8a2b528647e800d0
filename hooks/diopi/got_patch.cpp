#include "hooks/diopi/got_patch.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#include "collector/api.h"

namespace profagent::hooks::diopi {
namespace {

// One loaded object as dl_iterate_phdr described it.
struct LoadedObject {
  ElfW(Addr) base = 0;
  const char* name = nullptr;  // "" for the main program
  const ElfW(Phdr)* phdr = nullptr;
  ElfW(Half) phnum = 0;
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

struct ObjectList {
  LoadedObject objects[kMaxObjects];
  size_t count = 0;
};

std::mutex g_scan_mutex;              // serialises scans; a leaf lock
uintptr_t g_scanned[kMaxObjects];     // identities of objects already scanned (under the mutex)
size_t g_scanned_count = 0;

const void* own_base() noexcept {
  static const void* base = [] {
    Dl_info info{};
    return dladdr(reinterpret_cast<const void*>(&own_base), &info) != 0 ? info.dli_fbase : nullptr;
  }();
  return base;
}

bool is_ours(const void* address) noexcept {
  Dl_info info{};
  return address != nullptr && dladdr(address, &info) != 0 && info.dli_fbase == own_base();
}

int list_object(dl_phdr_info* info, size_t, void* data) {
  auto& list = *static_cast<ObjectList*>(data);
  if (list.count == kMaxObjects) return 1;
  list.objects[list.count++] = {info->dlpi_addr, info->dlpi_name, info->dlpi_phdr, info->dlpi_phnum};
  return 0;
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
  if (!plt_is_rela) view.tables[0] = nullptr;  // x86-64 uses RELA only
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

// dlsym in the object's own lookup scope (itself, then its dependencies).
void* lookup_from(const char* object_name, const char* symbol) noexcept {
  void* handle = dlopen(object_name[0] == '\0' ? nullptr : object_name, RTLD_NOLOAD | RTLD_LAZY);
  if (handle == nullptr) return nullptr;
  void* address = dlsym(handle, symbol);
  dlclose(handle);  // drops only the reference RTLD_NOLOAD took
  return is_ours(address) ? nullptr : address;
}

void* real_target_of(const LoadedObject& object, const char* symbol, void* value) noexcept {
  if (!inside(object, value)) return is_ours(value) ? nullptr : value;
  return lookup_from(object.name, symbol);  // a lazy PLT stub, or the object's own definition
}

bool store_slot(const DynamicView& view, void** slot, void* wrapper) noexcept {
  const auto at = reinterpret_cast<ElfW(Addr)>(slot);
  if (at < view.relro_begin || at >= view.relro_end) {
    __atomic_store_n(slot, wrapper, __ATOMIC_RELEASE);
    return true;
  }
  const long page_size = sysconf(_SC_PAGESIZE);
  void* page = reinterpret_cast<void*>(at & ~ElfW(Addr)(page_size - 1));
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

void patch_slot(const LoadedObject& object, const DynamicView& view, const ElfW(Rela)& rela,
                const char* symbol, const PatchTarget& target, PatchStats& stats) noexcept {
  auto** slot = reinterpret_cast<void**>(object.base + rela.r_offset);
  void* value = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  for (size_t i = 0; i < target.copies; ++i) {
    if (value == target.wrappers[i]) return;  // patched before (JUMP_SLOT and GLOB_DAT share names)
  }
  void* real = value == nullptr ? nullptr : real_target_of(object, symbol, value);
  if (real == nullptr) {
    ++stats.slots_null;
    return;
  }
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

void patch_object(const LoadedObject& object, TargetLookup lookup, PatchStats& stats) noexcept {
  DynamicView view;
  if (!read_dynamic(object, view)) return;
  ++stats.objects_scanned;
  for (int t = 0; t < 2; ++t) {
    const size_t count = view.tables[t] == nullptr ? 0 : view.sizes[t] / sizeof(ElfW(Rela));
    for (size_t i = 0; i < count; ++i) {
      const ElfW(Rela)& rela = view.tables[t][i];
      const auto type = ELF64_R_TYPE(rela.r_info);
      if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
      const char* symbol = view.strtab + view.symtab[ELF64_R_SYM(rela.r_info)].st_name;
      if (std::strncmp(symbol, "diopi", 5) != 0) continue;
      const PatchTarget target = lookup(symbol);
      if (target.wrappers != nullptr) patch_slot(object, view, rela, symbol, target, stats);
    }
  }
}

uintptr_t identity(const LoadedObject& object) noexcept {
  return uintptr_t(object.base) ^ (uintptr_t(object.phdr) << 1);
}

bool first_visit(const LoadedObject& object) noexcept {
  const uintptr_t id = identity(object);
  for (size_t i = 0; i < g_scanned_count; ++i) {
    if (g_scanned[i] == id) return false;
  }
  if (g_scanned_count < kMaxObjects) g_scanned[g_scanned_count++] = id;
  return true;
}

ObjectList& object_list() noexcept {
  static ObjectList* list = new ObjectList;  // leaked; used under g_scan_mutex only
  return *list;
}

}  // namespace

PatchStats patch_new_objects(TargetLookup lookup) noexcept {
  PatchStats stats;
  collector::AgentBusy busy;
  std::lock_guard<std::mutex> lock(g_scan_mutex);
  ObjectList& list = object_list();
  list.count = 0;
  dl_iterate_phdr(list_object, &list);
  for (size_t i = 0; i < list.count; ++i) {
    const LoadedObject& object = list.objects[i];
    if (is_ours(object.phdr)) continue;  // never patch libprofagent itself
    if (first_visit(object)) patch_object(object, lookup, stats);
  }
  return stats;
}

void forget_unloaded_objects() noexcept {
  collector::AgentBusy busy;
  std::lock_guard<std::mutex> lock(g_scan_mutex);
  ObjectList& list = object_list();
  list.count = 0;
  dl_iterate_phdr(list_object, &list);
  size_t kept = 0;
  for (size_t i = 0; i < g_scanned_count; ++i) {
    for (size_t j = 0; j < list.count; ++j) {
      if (identity(list.objects[j]) == g_scanned[i]) {
        g_scanned[kept++] = g_scanned[i];
        break;
      }
    }
  }
  g_scanned_count = kept;
}

void* find_definition(const char* symbol) noexcept {
  collector::AgentBusy busy;
  std::lock_guard<std::mutex> lock(g_scan_mutex);
  ObjectList& list = object_list();
  list.count = 0;
  dl_iterate_phdr(list_object, &list);
  for (size_t i = 0; i < list.count; ++i) {
    if (is_ours(list.objects[i].phdr)) continue;
    if (void* address = lookup_from(list.objects[i].name, symbol)) return address;
  }
  return nullptr;
}

}  // namespace profagent::hooks::diopi
