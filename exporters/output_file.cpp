#include "exporters/output_file.h"

#include "exporters/output_dir_walk.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "exporters/quiet_write.h"

namespace profagent::exporters {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// The file under construction: an unnamed file of the directory (O_TMPFILE), linked under its
// name on commit, so a process killed while writing (a pool worker terminated by SIGTERM as it
// exits) leaves nothing behind; where the file system has no unnamed files, a hidden named
// temporary, renamed on commit (removed on failure, but left if the process is killed).
class AtomicFile final : public OutputStream {
 public:
  AtomicFile(int dir_fd, int fd, std::string tmp, std::string final_name, std::string shown)
      : dir_fd_(dir_fd), fd_(fd), tmp_(std::move(tmp)), final_(std::move(final_name)),
        shown_(std::move(shown)) {}
  ~AtomicFile() override { discard(); }

  bool write(const char* data, std::size_t size) override;
  std::string commit() override;
  std::string published_name() const override { return published_; }

 private:
  void discard();
  int publish();
  bool place(const std::string& target);  // false with errno set

  int dir_fd_;
  int fd_;
  std::string tmp_;
  std::string final_;
  std::string shown_;  // the final path, for messages
  std::string published_;  // the numbered name used instead of final_, if any
  int error_ = 0;
  bool committed_ = false;
};

bool AtomicFile::write(const char* data, std::size_t size) {
  while (size > 0 && error_ == 0) {
    const ssize_t n = write_without_signals(fd_, data, size);  // past `ulimit -f`: EFBIG, no SIGXFSZ
    if (n < 0) {
      if (errno != EINTR) error_ = errno;
      continue;
    }
    if (n == 0) error_ = EIO;  // no progress: treat as an I/O error rather than loop forever
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return error_ == 0;
}

std::string AtomicFile::commit() {
  if (committed_) return {};
  if (tmp_.empty()) {  // unnamed: linked through its descriptor, which must stay open until then
    if (error_ == 0) error_ = publish();
    if (::close(fd_) != 0 && errno != EINTR && error_ == 0) error_ = errno;
  } else {
    if (error_ == 0 && ::close(fd_) != 0 && errno != EINTR) error_ = errno;
    if (error_ == 0) error_ = publish();
  }
  fd_ = -1;
  if (error_ != 0) {
    discard();
    return "cannot write " + shown_ + ": " + errno_text(error_);
  }
  committed_ = true;
  return {};
}

// "a.w1.trace.json" -> "a.w1-2.trace.json": the number goes before the two-part extension, so
// the trace, table and summary of one run keep a common stem.
std::string numbered_name(const std::string& name, int number) {
  const std::size_t last = name.rfind('.');
  std::size_t cut = last == std::string::npos || last == 0 ? std::string::npos : name.rfind('.', last - 1);
  if (cut == std::string::npos || cut == 0) cut = last;  // one extension: "t.json" -> "t-2.json"
  const std::string suffix = "-" + std::to_string(number);
  if (cut == std::string::npos || cut == 0) return name + suffix;
  return name.substr(0, cut) + suffix + name.substr(cut);
}

// Never replaces an existing file (a previous image of this pid after exec, a file planted or
// left there): renameat2(RENAME_NOREPLACE) refuses, and the next free number is taken. A
// planted symlink is an existing name too, so it is never followed nor replaced.
// linkat never replaces an existing name either.
bool AtomicFile::place(const std::string& target) {
  if (tmp_.empty()) {
    // thread-self: once the main thread has called pthread_exit, /proc/self (the thread group
    // leader) no longer shows the process's descriptors.
    const std::string self = "/proc/thread-self/fd/" + std::to_string(fd_);
    return ::linkat(AT_FDCWD, self.c_str(), dir_fd_, target.c_str(), AT_SYMLINK_FOLLOW) == 0;
  }
  bool done = ::renameat2(dir_fd_, tmp_.c_str(), dir_fd_, target.c_str(), RENAME_NOREPLACE) == 0;
  if (!done && (errno == EINVAL || errno == ENOSYS)) {  // a file system without RENAME_NOREPLACE
    done = ::linkat(dir_fd_, tmp_.c_str(), dir_fd_, target.c_str(), 0) == 0;
    if (done) ::unlinkat(dir_fd_, tmp_.c_str(), 0);
  }
  return done;
}

int AtomicFile::publish() {
  constexpr int kNumbers = 100;
  for (int number = 1; number <= kNumbers; ++number) {
    const std::string target = number == 1 ? final_ : numbered_name(final_, number);
    if (place(target)) {
      if (number > 1) published_ = target;
      return 0;
    }
    if (errno != EEXIST) return errno;
  }
  return EEXIST;
}

void AtomicFile::discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!committed_ && !tmp_.empty()) ::unlinkat(dir_fd_, tmp_.c_str(), 0);
  tmp_.clear();
}

bool plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

std::string strip_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

std::unique_ptr<OutputDir> OutputDir::create(const std::string& raw_path, std::string* error) {
  const std::string path = strip_trailing_slashes(raw_path.empty() ? "." : raw_path);
  const int fd = open_output_directory(path, error);
  if (fd < 0) return nullptr;
  return std::unique_ptr<OutputDir>(new OutputDir(fd, path));
}

OutputDir::~OutputDir() { ::close(fd_); }

std::unique_ptr<OutputStream> OutputDir::open(const std::string& name, std::string* error) {
  if (!plain_file_name(name)) {
    *error = "refusing output file name '" + name + "': not a plain file name";
    return nullptr;
  }
  // Unnamed files are linked through /proc/thread-self/fd (linkat with AT_EMPTY_PATH would need
  // CAP_DAC_READ_SEARCH): without it, the named temporary.
  if (::access("/proc/thread-self/fd", X_OK) == 0) {
    const int fd = ::openat(fd_, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) return std::make_unique<AtomicFile>(fd_, fd, std::string(), name, location(name));
  }
  static std::atomic<unsigned> counter{0};
  constexpr int kAttempts = 16;  // a planted name only costs one attempt each
  int err = 0;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const std::string tmp = "." + name + "." + std::to_string(::getpid()) + "." +
                            std::to_string(counter.fetch_add(1)) + ".tmp";
    const int fd = ::openat(fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                            0644);
    if (fd >= 0) return std::make_unique<AtomicFile>(fd_, fd, tmp, name, location(name));
    err = errno;
    if (err != EEXIST) break;
  }
  *error = "cannot create a file in " + path_ + ": " + errno_text(err);
  return nullptr;
}

}  // namespace profagent::exporters
