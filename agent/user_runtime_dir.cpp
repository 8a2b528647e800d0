#include "agent/user_runtime_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace profagent::agent {

std::string user_runtime_dir_path() {
  // secure_getenv: nothing is taken from the environment of a setuid program.
  const char* runtime = secure_getenv("XDG_RUNTIME_DIR");
  const bool usable = runtime != nullptr && runtime[0] == '/' && std::strpbrk(runtime, " :") == nullptr;
  return usable ? std::string(runtime) + "/profagent" : "/tmp/profagent-" + std::to_string(geteuid());
}

std::string user_runtime_dir(std::string& why) {
  const std::string dir = user_runtime_dir_path();
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    why = "cannot create " + dir + ": " + std::strerror(errno);
    return {};
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    why = dir + " is not a directory that only this user can write";
    return {};
  }
  return dir;
}

}  // namespace profagent::agent
