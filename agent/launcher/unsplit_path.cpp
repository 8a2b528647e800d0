#include "agent/launcher/unsplit_path.h"

#include "agent/user_runtime_dir.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace profagent::launcher {
namespace {

constexpr const char* kSeparators = " :";  // ld.so's for LD_PRELOAD; ':' is also PYTHONPATH's

bool splits(const std::string& path) { return path.find_first_of(kSeparators) != std::string::npos; }

// "<hash of the target>-<its file name, separators replaced>": one name per installation.
std::string link_name(const std::string& target) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : target) hash = (hash ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  std::string file = target.substr(target.rfind('/') + 1);
  for (char& c : file) {
    if (std::strchr(kSeparators, c) != nullptr) c = '_';
  }
  return std::string(hex) + "-" + file;
}

bool points_to(const std::string& link, const std::string& target) {
  char buffer[PATH_MAX];
  const ssize_t n = readlink(link.c_str(), buffer, sizeof buffer);
  return n > 0 && size_t(n) < sizeof buffer && target.compare(0, std::string::npos, buffer, size_t(n)) == 0;
}

}  // namespace

std::string unsplit_path(const std::string& path, std::string& why) {
  if (!splits(path)) return path;
  char real[PATH_MAX];
  if (realpath(path.c_str(), real) == nullptr) {
    why = "cannot resolve " + path + ": " + std::strerror(errno);
    return {};
  }
  const std::string dir = agent::user_runtime_dir(why);
  if (dir.empty()) return {};
  const std::string link = dir + "/" + link_name(real);
  if (points_to(link, real)) return link;
  // A new link under a temporary name, renamed over the old: a concurrent run sees one or the other.
  const std::string temporary = dir + "/." + link_name(real) + "." + std::to_string(getpid());
  unlink(temporary.c_str());
  if (symlink(real, temporary.c_str()) != 0 || rename(temporary.c_str(), link.c_str()) != 0) {
    why = "cannot make the link " + link + ": " + std::strerror(errno);
    unlink(temporary.c_str());
    return {};
  }
  return link;
}

}  // namespace profagent::launcher
