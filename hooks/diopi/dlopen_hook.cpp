// dlopen, interposed so that DIOPI importers loaded after start-up get their GOT slots patched
// (hooks/diopi/install.h) before the application calls through them.
//
// Why this is safe although glibc decides some searches by the CALLER of dlopen (its
// DT_RPATH/DT_RUNPATH and $ORIGIN, which is why hooks/resolve.cpp avoids a dlopen hook): a
// name with a '/' does not depend on the caller, and neither does a name already loaded (the
// loader matches loaded objects by name first). For any other bare name we repeat the
// caller-dependent part of the search ourselves: the directories glibc would search for the
// calling object (dlinfo RTLD_DI_SERINFO on it: its RPATH, LD_LIBRARY_PATH, its RUNPATH, in
// that order) are tried in order, and the first file found there is opened by full path; the
// ld.so.cache and default directories come after them in glibc too, and do not depend on the
// caller, so the plain call handles them.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "hooks/diopi/install.h"

namespace {

using DlopenFn = void* (*)(const char*, int);

DlopenFn real_dlopen() noexcept {
  static DlopenFn real = reinterpret_cast<DlopenFn>(dlsym(RTLD_NEXT, "dlopen"));
  return real;
}

// Caller-specific directories (LA_SER_RUNPATH: RPATH/RUNPATH, LA_SER_LIBPATH:
// LD_LIBRARY_PATH) in glibc's order, for the object containing `caller`.
Dl_serinfo* caller_search_path(const void* caller) noexcept {
  Dl_info info{};
  if (dladdr(caller, &info) == 0 || info.dli_fname == nullptr) return nullptr;
  void* handle = real_dlopen()(info.dli_fname[0] == '\0' ? nullptr : info.dli_fname,
                               RTLD_NOLOAD | RTLD_LAZY);
  if (handle == nullptr) return nullptr;
  Dl_serinfo size{};
  Dl_serinfo* paths = nullptr;
  if (dlinfo(handle, RTLD_DI_SERINFOSIZE, &size) == 0 && size.dls_size > 0) {
    paths = static_cast<Dl_serinfo*>(std::malloc(size.dls_size));
    if (paths != nullptr) {
      std::memcpy(paths, &size, sizeof size);
      if (dlinfo(handle, RTLD_DI_SERINFO, paths) != 0) {
        std::free(paths);
        paths = nullptr;
      }
    }
  }
  dlclose(handle);
  return paths;
}

void* open_like_caller(const char* file, int mode, const void* caller) noexcept {
  Dl_serinfo* paths = caller_search_path(caller);
  void* handle = nullptr;
  for (unsigned i = 0; paths != nullptr && i < paths->dls_cnt && handle == nullptr; ++i) {
    const Dl_serpath& dir = paths->dls_serpath[i];
    if ((dir.dls_flags & (LA_SER_RUNPATH | LA_SER_LIBPATH)) == 0) continue;
    try {
      const std::string path = std::string(dir.dls_name) + "/" + file;
      if (access(path.c_str(), F_OK) == 0) handle = real_dlopen()(path.c_str(), mode);
    } catch (...) {
    }
  }
  std::free(paths);
  return handle != nullptr ? handle : real_dlopen()(file, mode);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void* dlopen(const char* file, int mode) {
  const DlopenFn real = real_dlopen();
  if (real == nullptr) return nullptr;
  void* handle = nullptr;
  if (file == nullptr || std::strchr(file, '/') != nullptr) {
    handle = real(file, mode);
  } else if ((handle = real(file, mode | RTLD_NOLOAD)) == nullptr && (mode & RTLD_NOLOAD) == 0) {
    handle = open_like_caller(file, mode, __builtin_return_address(0));
  }
  if (handle != nullptr && (mode & RTLD_NOLOAD) == 0) profagent::hooks::diopi::rescan();
  return handle;
}
