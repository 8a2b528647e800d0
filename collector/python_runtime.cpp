#include "collector/python_runtime.h"

#include <dlfcn.h>
#include <link.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace profagent::collector {
namespace {

// A libpython loaded RTLD_LOCAL (an embedding program): its symbols are not in the global scope.
// Its name is copied out and opened after dl_iterate_phdr returns: the callback runs under the
// loader's write lock, where a dlopen can deadlock with another thread's dlopen.
int find_libpython(dl_phdr_info* info, size_t, void* out) {
  const char* name = info->dlpi_name;
  if (!name || !std::strstr(name, "libpython3") || std::strlen(name) >= PATH_MAX) return 0;
  std::strcpy(static_cast<char*>(out), name);
  return 1;
}

}  // namespace

void* python_library(bool* found) noexcept {
  if (dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState") != nullptr) return *found = true, nullptr;
  char name[PATH_MAX] = {};
  dl_iterate_phdr(find_libpython, name);
  void* handle = name[0] != 0 ? dlopen(name, RTLD_LAZY | RTLD_NOLOAD) : nullptr;
  *found = handle != nullptr;
  return handle;
}

void* python_symbol(void* library, const char* name) noexcept {
  return dlsym(library ? library : RTLD_DEFAULT, name);
}

PythonVersion python_version(void* library) noexcept {
  PythonVersion version;
  if (auto* hex = static_cast<const unsigned long*>(python_symbol(library, "Py_Version"))) {
    version.major = (*hex >> 24) & 0xFF;
    version.minor = (*hex >> 16) & 0xFF;
    std::snprintf(version.text, sizeof version.text, "%u.%u.%lu", version.major, version.minor, (*hex >> 8) & 0xFF);
    return version;
  }
  auto get_version = reinterpret_cast<const char* (*)()>(python_symbol(library, "Py_GetVersion"));
  std::snprintf(version.text, sizeof version.text, "%.20s", get_version ? get_version() : "(unknown)");
  if (char* space = std::strchr(version.text, ' ')) *space = '\0';
  unsigned major = 0, minor = 0;
  if (std::sscanf(version.text, "%u.%u", &major, &minor) == 2) version.major = major, version.minor = minor;
  return version;
}

}  // namespace profagent::collector
