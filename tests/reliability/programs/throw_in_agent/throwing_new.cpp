// Test-only preload: makes the agent's own allocations throw std::bad_alloc, to check that no
// exception leaves a hook (tests/reliability/cases_throw_in_agent.py). Preloaded after
// libprofagent.so, it defines malloc and the global operator new. The agent carries its own
// copy of the C++ runtime (agent/static_runtime.cmake), whose operator new is local to it and
// allocates with malloc, the process's: refused there, it throws std::bad_alloc (the nothrow
// form returns nullptr), as a real out-of-memory would. An agent linked to libstdc++.so binds
// to the operator new here instead. While armed (throwing_new_arm(1), found by the program with
// dlsym), an allocation whose call stack passes through libprofagent.so fails; every other
// allocation — the program's, the CUDA runtime's — succeeds as usual.
// At exit the number of refused allocations is written to $THROWING_NEW_REPORT.
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

extern "C" void* __libc_malloc(size_t size);  // glibc's own, under the malloc defined here

namespace {

std::atomic<bool> g_armed{false};
std::atomic<unsigned long> g_refused{0};

// Where one loaded object is mapped (its PT_LOAD segments, whole).
struct Range {
  const char* name;
  uintptr_t begin = 0, end = 0;
  bool contains(uintptr_t pc) const { return pc >= begin && pc < end; }
};
Range g_agent{"libprofagent.so"};
Range g_libstdcxx{"libstdc++.so"};
Range g_self{"libthrowing_new.so"};

int find_range(dl_phdr_info* info, size_t, void* data) {
  Range& range = *static_cast<Range*>(data);
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, range.name) == nullptr) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    const uintptr_t begin = info->dlpi_addr + segment.p_vaddr, end = begin + segment.p_memsz;
    if (range.begin == 0 || begin < range.begin) range.begin = begin;
    if (end > range.end) range.end = end;
  }
  return 1;
}

// The first caller outside this library and libstdc++ (std::string and containers allocate
// from there on the caller's behalf) decides: the agent's own code, not the CUDA runtime that
// the agent's hook is calling.
bool called_from_agent() {
  void* frames[16];
  const int count = backtrace(frames, 16);
  for (int i = 0; i < count; ++i) {
    const auto pc = reinterpret_cast<uintptr_t>(frames[i]);
    if (g_self.contains(pc) || g_libstdcxx.contains(pc)) continue;
    return g_agent.contains(pc);
  }
  return false;
}

thread_local bool tls_inside = false;  // backtrace() itself may allocate the first time

bool refuse() {
  if (!g_armed.load(std::memory_order_relaxed) || tls_inside) return false;
  tls_inside = true;
  const bool from_agent = called_from_agent();
  tls_inside = false;
  if (from_agent) {
    g_refused.fetch_add(1, std::memory_order_relaxed);
    // THROWING_NEW_TRACE=1: where each refused allocation came from (to debug a failing case).
    if (std::getenv("THROWING_NEW_TRACE") != nullptr) {
      void* frames[8];
      backtrace_symbols_fd(frames, backtrace(frames, 8), 2);
      ::write(2, "--\n", 3);
    }
  }
  return from_agent;
}

void* allocate(size_t size) {
  void* memory = __libc_malloc(size != 0 ? size : 1);
  if (memory == nullptr) throw std::bad_alloc();
  return memory;
}

struct Report {
  ~Report() {
    if (const char* path = std::getenv("THROWING_NEW_REPORT")) {
      if (FILE* file = std::fopen(path, "w")) {
        std::fprintf(file, "%lu\n", g_refused.load());
        std::fclose(file);
      }
    }
  }
} g_report;

}  // namespace

extern "C" __attribute__((visibility("default"))) void throwing_new_arm(int on) {
  if (on && g_agent.end == 0) {
    dl_iterate_phdr(find_range, &g_agent);
    dl_iterate_phdr(find_range, &g_libstdcxx);
    dl_iterate_phdr(find_range, &g_self);
    void* warm[2];
    backtrace(warm, 2);  // loads the unwinder now, not inside an armed allocation
  }
  g_armed.store(on != 0 && g_agent.end != 0);
}

extern "C" __attribute__((visibility("default"))) void* malloc(size_t size) {
  if (refuse()) return nullptr;
  return __libc_malloc(size);
}

void* operator new(size_t size) {
  if (refuse()) throw std::bad_alloc();
  return allocate(size);
}
void* operator new[](size_t size) {
  if (refuse()) throw std::bad_alloc();
  return allocate(size);
}
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  if (refuse()) return nullptr;
  return __libc_malloc(size != 0 ? size : 1);
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  if (refuse()) return nullptr;
  return __libc_malloc(size != 0 ? size : 1);
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete[](void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, size_t) noexcept { std::free(memory); }
void operator delete[](void* memory, size_t) noexcept { std::free(memory); }
