#include "collector/helper_libraries.h"

#include <dlfcn.h>

namespace profagent::collector {

std::vector<std::string> helper_library_paths(const std::string& file_name) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&helper_library_paths), &info) == 0 || info.dli_fname == nullptr) {
    return {file_name};
  }
  std::string dir(info.dli_fname);
  const size_t slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  return {dir + "/" + file_name, dir + "/../lib/" + file_name};
}

}  // namespace profagent::collector
