#include "collector/process_info.h"

#include "collector/collectives.h"

#include <dlfcn.h>
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

struct OwnLibrary {
  std::string name;  // as the loader opened it
  std::string path;  // its real path; "" when it cannot be resolved
};

OwnLibrary resolve_own_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_library_path), &info) == 0 || info.dli_fname == nullptr) return {};
  OwnLibrary own{info.dli_fname, {}};
  char path[PATH_MAX];
  if (realpath(info.dli_fname, path) != nullptr) own.path = path;
  return own;
}

// Resolved once: the library does not move while it is loaded, and start-up asks for it several
// times (each realpath is one readlink per component of the path: a cost every process pays).
const OwnLibrary& own_library() {
  static const OwnLibrary* const own = new OwnLibrary(resolve_own_library());  // leaked
  return *own;
}

}  // namespace

std::string own_library_path() noexcept {
  try {
    return own_library().path;
  } catch (...) {
    return {};  // out of memory: as if the path were unknown (callers then do without it)
  }
}

std::string own_library_name() noexcept {
  try {
    return own_library().name;
  } catch (...) {
    return {};
  }
}

}  // namespace profagent::collector
