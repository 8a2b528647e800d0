#include "exporters/output_dir_walk.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

namespace profagent::exporters {
namespace {

constexpr int kMaxLinks = 40;  // as the kernel's own limit on links in one path (ELOOP)

std::string errno_text(int err) { return std::strerror(err); }

// Appends the components of `path` ("a/b//c" -> a, b, c) in front of `pending`.
void push_components(const std::string& path, std::deque<std::string>& pending) {
  std::deque<std::string> parts;
  size_t begin = 0;
  while (begin <= path.size()) {
    const size_t slash = path.find('/', begin);
    const size_t end = slash == std::string::npos ? path.size() : slash;
    if (end > begin && path.compare(begin, end - begin, ".") != 0) parts.push_back(path.substr(begin, end - begin));
    begin = end + 1;
  }
  pending.insert(pending.begin(), parts.begin(), parts.end());
}

class Walk {
 public:
  Walk(const std::string& path, std::string* error) : path_(path), error_(error) {}
  ~Walk() {
    if (dir_ >= 0) ::close(dir_);
  }
  int run();

 private:
  bool restart(bool absolute);
  bool step(const std::string& name, bool last);
  bool follow(const std::string& name, const struct stat& link);
  bool enter(const std::string& name);
  bool fail(const std::string& why) {
    *error_ = "cannot open output directory " + path_ + ": " + why;
    return false;
  }
  // `name` under the components walked so far, for messages.
  std::string shown(const std::string& name) const {
    return reached_.empty() ? (rooted_ ? "/" : "") + name : reached_ + "/" + name;
  }

  const std::string& path_;
  std::string* error_;
  std::deque<std::string> pending_;
  std::string reached_;  // the components walked so far, for messages
  int dir_ = -1;
  bool rooted_ = false;  // reached_ starts at "/"
  int links_ = 0;
};

bool Walk::restart(bool absolute) {
  const int fd = ::open(absolute ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fail(errno_text(errno));
  if (dir_ >= 0) ::close(dir_);
  dir_ = fd;
  if (absolute) reached_.clear(), rooted_ = true;
  return true;
}

int Walk::run() {
  if (!restart(!path_.empty() && path_[0] == '/')) return -1;
  push_components(path_, pending_);
  while (!pending_.empty()) {
    const std::string name = pending_.front();
    pending_.pop_front();
    if (!step(name, pending_.empty())) return -1;
  }
  const int fd = dir_;
  dir_ = -1;
  return fd;
}

bool Walk::step(const std::string& name, bool last) {
  struct stat st {};
  if (::fstatat(dir_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) return fail(shown(name) + ": " + errno_text(errno));
    if (::mkdirat(dir_, name.c_str(), 0755) != 0 && errno != EEXIST) {
      *error_ = "cannot create directory " + shown(name) + ": " + errno_text(errno);
      return false;
    }
    return enter(name);
  }
  if (!S_ISLNK(st.st_mode) && !S_ISDIR(st.st_mode) && !last) {
    *error_ = "cannot create directory " + shown(name) + "/" + pending_.front() + ": " + errno_text(ENOTDIR);
    return false;
  }
  if (!S_ISLNK(st.st_mode)) return enter(name);
  if (last) return fail("it is a symbolic link (refused)");
  return follow(name, st);
}

// A link owned by this user or root is followed: its target's components come next.
bool Walk::follow(const std::string& name, const struct stat& link) {
  if (link.st_uid != ::geteuid() && link.st_uid != 0) {
    return fail(shown(name) + " is a symbolic link owned by uid " + std::to_string(link.st_uid) +
                " (another user: refused)");
  }
  if (++links_ > kMaxLinks) return fail(errno_text(ELOOP));
  char target[PATH_MAX];
  const ssize_t length = ::readlinkat(dir_, name.c_str(), target, sizeof target - 1);
  if (length <= 0) return fail(shown(name) + ": " + errno_text(length < 0 ? errno : ENOENT));
  const std::string text(target, size_t(length));
  if (text[0] == '/' && !restart(true)) return false;
  push_components(text, pending_);
  return true;
}

bool Walk::enter(const std::string& name) {
  const int fd = ::openat(dir_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    // ELOOP: a link put there since it was looked at; it is not followed.
    const int err = errno;
    return fail(shown(name) + ": " + (err == ELOOP ? "a symbolic link (refused)" : errno_text(err)));
  }
  ::close(dir_);
  dir_ = fd;
  reached_ = shown(name);
  return true;
}

}  // namespace

int open_output_directory(const std::string& path, std::string* error) {
  return Walk(path, error).run();
}

}  // namespace profagent::exporters
