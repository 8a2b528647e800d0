#include "collector/process_info.h"

#include "collector/collectives.h"

#include <link.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace profagent::collector {
namespace {

bool read_int(const char* variable, int* value) {
  const char* text = std::getenv(variable);
  if (!text || !*text) return false;
  char* end = nullptr;
  long parsed = std::strtol(text, &end, 10);
  if (*end != '\0' || parsed < 0 || parsed > 1'000'000'000) return false;
  *value = int(parsed);
  return true;
}

std::string read_command_line() {
  FILE* file = std::fopen("/proc/self/cmdline", "re");
  if (!file) return {};
  std::string text;
  char chunk[4096];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) text.append(chunk, n);
  std::fclose(file);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text) {
    if (c == '\0') c = ' ';  // arguments are NUL-separated
  }
  return text;
}

std::string read_exe_name() {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return {};
  std::string full(path, size_t(n));
  size_t slash = full.rfind('/');
  return slash == std::string::npos ? full : full.substr(slash + 1);
}

}  // namespace

bool read_rank(int* rank, int* world_size) {
  static const char* const kPairs[][2] = {{"RANK", "WORLD_SIZE"},
                                          {"SLURM_PROCID", "SLURM_NTASKS"},
                                          {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                          {"PMI_RANK", "PMI_SIZE"}};
  *rank = 0;
  *world_size = 1;
  for (const auto& pair : kPairs) {
    if (!read_int(pair[0], rank)) continue;
    if (!read_int(pair[1], world_size) || *world_size <= *rank) *world_size = *rank + 1;
    return true;
  }
  return false;
}

int read_local_rank() {
  static const char* const kNames[] = {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"};
  for (const char* name : kNames) {
    int value = 0;
    if (read_int(name, &value)) return value;
  }
  return 0;
}

ProcessInfo read_process_info() {
  ProcessInfo info;
  info.pid = uint32_t(getpid());
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) info.host_name = host;
  info.exe_name = read_exe_name();
  info.command_line = read_command_line();
  info.rank_from_environment = read_rank(&info.rank, &info.world_size);
  info.local_rank = read_local_rank();
  apply_communicator_rank(info);
  return info;
}

namespace {

// The loaded object whose segments hold `found->address`: its name, as the loader opened it.
struct ObjectAt {
  uintptr_t address = 0;
  const char* name = nullptr;
};

int find_object_at(dl_phdr_info* info, size_t, void* data) noexcept {
  auto* found = static_cast<ObjectAt*>(data);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    const uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_LOAD && found->address - begin < segment.p_memsz) {
      found->name = info->dlpi_name;
      return 1;
    }
  }
  return 0;
}

// The name the loader opened this library under, resolved once (it does not change while the
// library is loaded), from the loader's list of objects without file access. (dladdr also
// looks for the nearest symbol, a walk over the agent's whole symbol table: ~10 k
// instructions at every process's start-up.)
const std::string& own_library_loaded_name() {
  static const std::string* const name = [] {
    ObjectAt own{reinterpret_cast<uintptr_t>(&own_library_path), nullptr};
    dl_iterate_phdr(find_object_at, &own);
    return new std::string(own.name != nullptr ? own.name : "");  // leaked
  }();
  return *name;
}

// Its real path, resolved once, when first asked for: realpath costs one readlink per component
// of the path, which a process that only starts and exits need not pay.
const std::string& own_library_real_path() {
  static const std::string* const path = [] {
    const std::string& name = own_library_loaded_name();
    char real[PATH_MAX];
    return new std::string(!name.empty() && realpath(name.c_str(), real) != nullptr ? real : "");  // leaked
  }();
  return *path;
}

}  // namespace

std::string own_library_path() noexcept {
  try {
    return own_library_real_path();
  } catch (...) {
    return {};  // out of memory: as if the path were unknown (callers then do without it)
  }
}

std::string own_library_absolute_path() noexcept {
  try {
    const std::string& name = own_library_loaded_name();
    return !name.empty() && name.front() == '/' ? name : own_library_real_path();
  } catch (...) {
    return {};
  }
}

std::string own_library_name() noexcept {
  try {
    return own_library_loaded_name();
  } catch (...) {
    return {};
  }
}

bool names_own_library(const char* path) noexcept {
  if (path == nullptr || *path == '\0') return false;
  try {
    if (own_library_absolute_path() == path) return true;
    const std::string& real = own_library_real_path();
    char theirs[PATH_MAX];
    return !real.empty() && realpath(path, theirs) != nullptr && real == theirs;
  } catch (...) {
    return false;
  }
}

}  // namespace profagent::collector
