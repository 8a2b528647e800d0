#include "exporters/swap_files.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "exporters/quiet_write.h"

namespace profagent::exporters {
namespace {

std::string system_error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Writes at a file offset, through write_without_signals (no SIGXFSZ, no SIGPIPE).
class FileAt final : public OutputStream {
 public:
  FileAt(int fd, uint64_t offset) : fd_(fd), offset_(offset) {}
  bool write(const char* data, std::size_t size) override {
    if (!ok_ || lseek(fd_, off_t(offset_), SEEK_SET) < 0) return ok_ = false;
    while (size > 0) {
      const ssize_t n = write_without_signals(fd_, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return ok_ = false;
      data += n, size -= size_t(n), offset_ += uint64_t(n);
    }
    return true;
  }
  std::string commit() override { return {}; }
  uint64_t offset() const { return offset_; }

 private:
  int fd_;
  uint64_t offset_;
  bool ok_ = true;
};

// Copies [from, to) of `in` to the same offsets of `out`.
bool copy_range(int in, int out, uint64_t from, uint64_t to) {
  constexpr size_t kChunk = 1 << 20;
  std::unique_ptr<char[]> buffer(new char[kChunk]);
  FileAt sink(out, from);
  while (from < to) {
    const ssize_t n = pread(in, buffer.get(), std::min<uint64_t>(kChunk, to - from), off_t(from));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || !sink.write(buffer.get(), size_t(n))) return false;
    from += uint64_t(n);
  }
  return true;
}

// The published and swap names change places atomically. Where renameat2's exchange is not
// supported, three steps that each leave a complete file under `published`.
bool exchange_names(int dir, const std::string& swap, const std::string& published) {
  if (renameat2(dir, swap.c_str(), dir, published.c_str(), RENAME_EXCHANGE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return false;
  const std::string old = swap + ".old";
  unlinkat(dir, old.c_str(), 0);
  return linkat(dir, published.c_str(), dir, old.c_str(), 0) == 0 &&
         renameat(dir, swap.c_str(), dir, published.c_str()) == 0 &&
         renameat(dir, old.c_str(), dir, swap.c_str()) == 0;
}

}  // namespace

SwapFiles::SwapFiles(const OutputDir& dir, std::string name)
    : dir_(dir), name_(std::move(name)), swap_name_("." + name_ + ".swap") {}

SwapFiles::~SwapFiles() { close_both(); }

void SwapFiles::close_both() noexcept {
  for (File* file : {&published_, &swap_}) {
    if (file->fd >= 0) close(file->fd);
    file->fd = -1;
  }
}

std::string SwapFiles::append(const Part& body, const Part& tail, bool publish_now) {
  const std::string swap_path = dir_.location(swap_name_);
  if (swap_.fd < 0) {
    swap_.fd = openat(dir_.fd(), swap_name_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (swap_.fd < 0) return system_error("cannot create", swap_path);
    swap_.end = 0;
  }
  // The swap file brought to the published one's body (once after each publish: unpublished
  // parts go on from where the swap file's body ends), then the new part.
  if (published_.fd >= 0 && swap_.end < published_.end) {
    if (!copy_range(published_.fd, swap_.fd, swap_.end, published_.end)) return system_error("cannot write", swap_path);
    swap_.end = published_.end;
  }
  // A failed write leaves the published file as it was; its owner appends no more after one.
  FileAt out(swap_.fd, swap_.end);
  if (!body(out)) return system_error("cannot write", swap_path);
  swap_.end = out.offset();
  if (!publish_now) return {};
  if (!tail(out) || ftruncate(swap_.fd, off_t(out.offset())) != 0 || fsync(swap_.fd) != 0) {
    return system_error("cannot write", swap_path);
  }
  // The file now published holds everything (its end: the body's); the other one lacks the
  // parts since its own last publish.
  return publish();
}

std::string SwapFiles::publish() {
  const int dir = dir_.fd();
  const bool first = published_.fd < 0;
  const bool moved = first ? renameat(dir, swap_name_.c_str(), dir, name_.c_str()) == 0
                           : exchange_names(dir, swap_name_, name_);
  if (!moved) return system_error("cannot publish", location());
  fsync(dir);  // the new name survives a power loss too (best effort: some file systems refuse)
  std::swap(published_, swap_);
  return {};
}

std::string SwapFiles::write_at(uint64_t offset, std::string_view bytes) {
  FileAt out(published_.fd, offset);
  if (published_.fd < 0 || !out.write(bytes.data(), bytes.size()) || fsync(published_.fd) != 0) {
    return system_error("cannot write", location());
  }
  return {};
}

std::string SwapFiles::rename(const std::string& final_name) {
  if (renameat(dir_.fd(), name_.c_str(), dir_.fd(), final_name.c_str()) != 0) {
    return system_error("cannot rename " + location() + " to", dir_.location(final_name));
  }
  fsync(dir_.fd());
  name_ = final_name;  // location() names the final file now
  close_both();
  unlinkat(dir_.fd(), swap_name_.c_str(), 0);
  return {};
}

void SwapFiles::remove() noexcept {
  close_both();
  unlinkat(dir_.fd(), name_.c_str(), 0);
  unlinkat(dir_.fd(), swap_name_.c_str(), 0);
}

}  // namespace profagent::exporters
