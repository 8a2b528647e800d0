#include "agent/child_environment.h"

#include <dlfcn.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "agent/injection.h"
#include "agent/lifecycle.h"
#include "agent/nvtx_injection.h"
#include "collector/process_info.h"
#include "hooks/hook.h"  // PROFAGENT_EXPORT

extern char** environ;

namespace profagent::agent {
namespace {

// The variables the agent may set for itself (each to its own library path).
constexpr const char* kOwnVariables[] = {kCudaInjectionVariable, kNvtxInjectionVariable};

char g_own_value[PATH_MAX];     // what the agent writes into its own variables; "" if unknown
char g_preload_entry[PATH_MAX]; // the LD_PRELOAD entry that loaded it; "" if not preloaded

bool is_separator(char c) noexcept { return c == ' ' || c == ':'; }  // as ld.so splits it

// Whether the LD_PRELOAD list `list` has the entry `entry`.
bool lists_entry(const char* list, const char* entry) noexcept {
  const size_t length = std::strlen(entry);
  for (const char* p = list; *p != '\0';) {
    while (is_separator(*p)) ++p;
    const char* end = p;
    while (*end != '\0' && !is_separator(*end)) ++end;
    if (size_t(end - p) == length && length > 0 && std::strncmp(p, entry, length) == 0) return true;
    p = end;
  }
  return false;
}

// The entry of this process's LD_PRELOAD that names this library (as `own`, as the loader opened
// it, by real path, or by its file name when the entry is a bare name the loader searched for).
std::string find_preload_entry(const std::string& own) {
  const char* list = std::getenv("LD_PRELOAD");
  if (list == nullptr || own.empty()) return {};
  const std::string file = own.substr(own.rfind('/') + 1);
  const std::string loaded_as = collector::own_library_name();
  const std::string text = list;
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t end = text.find_first_of(" :", begin);
    const std::string entry = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    // An entry that is `own` already, or the very name the loader opened this library under,
    // is matched as it is: realpath costs one readlink per component of the path, at every
    // process's start-up.
    if (!entry.empty() && (entry == own || entry == loaded_as || collector::names_own_library(entry.c_str()) ||
                           (entry.find('/') == std::string::npos && entry == file))) {
      return entry;
    }
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return {};
}

// The value of `name` in `envp` ("NAME=value"), nullptr if absent.
const char* value_in(char* const* envp, const char* name) noexcept {
  const size_t length = std::strlen(name);
  for (char* const* entry = envp; entry != nullptr && *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, name, length) == 0 && (*entry)[length] == '=') return *entry + length + 1;
  }
  return nullptr;
}

// "NAME=value" is one of the agent's own variables holding its own value.
bool is_own_entry(const char* entry) noexcept {
  for (const char* name : kOwnVariables) {
    const size_t length = std::strlen(name);
    if (std::strncmp(entry, name, length) == 0 && entry[length] == '=' && is_own_value(name, entry + length + 1)) {
      return true;
    }
  }
  return false;
}

bool keeps_agent(char* const* envp) noexcept {
  const char* preload = value_in(envp, "LD_PRELOAD");
  return preload != nullptr && lists_entry(preload, g_preload_entry);
}

}  // namespace

void remember_own_variables() noexcept {
  try {
    const std::string own = collector::own_library_absolute_path();  // what the agent writes
    const std::string entry = find_preload_entry(own);
    if (own.size() >= sizeof g_own_value || entry.size() >= sizeof g_preload_entry) return;
    std::memcpy(g_preload_entry, entry.c_str(), entry.size() + 1);
    std::memcpy(g_own_value, own.c_str(), own.size() + 1);
  } catch (...) {
    // Out of memory at load: nothing is remembered, so nothing is ever removed or replaced.
  }
}

bool is_own_value(const char* name, const char* value) noexcept {
  if (value == nullptr || g_own_value[0] == '\0') return false;
  for (const char* own : kOwnVariables) {
    if (std::strcmp(name, own) == 0) return std::strcmp(value, g_own_value) == 0;
  }
  return false;
}

size_t child_environment_room(char* const* envp) noexcept {
  if (state() != AgentState::Ready || g_preload_entry[0] == '\0' || envp == nullptr) return 0;
  if (keeps_agent(envp)) return 0;
  size_t count = 0;
  bool own = false;
  for (char* const* entry = envp; *entry != nullptr; ++entry, ++count) own = own || is_own_entry(*entry);
  return own ? count + 1 : 0;
}

char* const* child_environment(char* const* envp, char** scratch, size_t room) noexcept {
  if (room == 0) return envp;
  size_t kept = 0;
  for (char* const* entry = envp; *entry != nullptr && kept + 1 < room; ++entry) {
    if (!is_own_entry(*entry)) scratch[kept++] = *entry;
  }
  scratch[kept] = nullptr;
  return scratch;
}

namespace {

// The next definition of `name` (glibc's), looked up once: a racing first call looks it up
// twice and stores the same address (no lock: a guard would be held across the loader's).
template <typename Fn>
Fn* next_definition(std::atomic<void*>& cache, const char* name) noexcept {
  void* known = cache.load(std::memory_order_acquire);
  if (known == nullptr) {
    known = dlsym(RTLD_NEXT, name);
    cache.store(known, std::memory_order_release);
  }
  return reinterpret_cast<Fn*>(known);
}

std::atomic<void*> g_setenv{nullptr}, g_posix_spawn{nullptr}, g_posix_spawnp{nullptr};

}  // namespace
}  // namespace profagent::agent

using profagent::agent::child_environment;
using profagent::agent::child_environment_room;

extern "C" {

// A program's setenv(name, its_tool, 0) finds the agent's own value as if the variable were
// unset (see child_environment.h); everything else is the real call.
PROFAGENT_EXPORT int setenv(const char* name, const char* value, int overwrite) noexcept {
  auto* real = profagent::agent::next_definition<int(const char*, const char*, int)>(profagent::agent::g_setenv, "setenv");
  if (real == nullptr) return errno = ENOSYS, -1;
  using profagent::agent::AgentState;
  if (overwrite == 0 && name != nullptr && profagent::agent::state() == AgentState::Ready &&
      profagent::agent::is_own_value(name, std::getenv(name))) {
    overwrite = 1;
  }
  return real(name, value, overwrite);
}

// For the Python hook's call wrapper (agent/python/profagent_ranges.c): os.environ hides the
// variables for which this is 1, as a program without the agent would not have them.
PROFAGENT_EXPORT int profagent_is_own_variable(const char* name, const char* value) noexcept {
  return name != nullptr && profagent::agent::is_own_value(name, value) ? 1 : 0;
}

// posix_spawn starts the new image in the library (its exec is not the interposed one): the
// environment is decided here, in the parent. Not noexcept: POSIX lets posix_spawn be a
// cancellation point (glibc's <spawn.h> leaves it without __THROW for that reason), and a
// noexcept frame turns cancellation's forced unwind into std::terminate (hooks/hook.h).
PROFAGENT_EXPORT int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                                 const posix_spawnattr_t* attributes, char* const argv[], char* const envp[]) {
  using Spawn = int(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
                    char* const[], char* const[]);
  auto* real = profagent::agent::next_definition<Spawn>(profagent::agent::g_posix_spawn, "posix_spawn");
  if (real == nullptr) return ENOSYS;
  const size_t room = child_environment_room(envp);
  char* scratch[room + 1];
  return real(pid, path, actions, attributes, argv, child_environment(envp, scratch, room));
}

PROFAGENT_EXPORT int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                                  const posix_spawnattr_t* attributes, char* const argv[], char* const envp[]) {
  using Spawn = int(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
                    char* const[], char* const[]);
  auto* real = profagent::agent::next_definition<Spawn>(profagent::agent::g_posix_spawnp, "posix_spawnp");
  if (real == nullptr) return ENOSYS;
  const size_t room = child_environment_room(envp);
  char* scratch[room + 1];
  return real(pid, file, actions, attributes, argv, child_environment(envp, scratch, room));
}

}  // extern "C"
