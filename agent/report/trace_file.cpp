#include "agent/report/trace_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace profagent::report {
namespace {

constexpr std::size_t kInputBytes = 1u << 20;

}  // namespace

TraceFile::~TraceFile() {
  if (inflating_) inflateEnd(&z_);
  if (fd_ >= 0) close(fd_);
}

bool TraceFile::open(const std::string& path, std::string& error) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return error = "cannot open it", false;
  struct stat st {};
  if (fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) file_bytes_ = uint64_t(st.st_size);
  in_.resize(kInputBytes);
  if (!refill(error)) return false;
  gzip_ = in_end_ >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
  if (!gzip_) return true;
  if (inflateInit2(&z_, 15 + 16) != Z_OK) return error = "cannot read it: zlib failed to start", false;  // gzip only
  inflating_ = true;
  member_open_ = true;
  return true;
}

// More input into in_ (only when all of it was used); eof_ once the file has none.
bool TraceFile::refill(std::string& error) {
  if (in_at_ < in_end_ || eof_) return true;
  for (;;) {
    const ssize_t n = ::read(fd_, in_.data(), in_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return error = std::string("cannot read it: ") + std::strerror(errno), false;
    in_at_ = 0;
    in_end_ = std::size_t(n);
    eof_ = n == 0;
    return true;
  }
}

long TraceFile::read(char* out, std::size_t size, std::string& error) {
  if (gzip_) return read_gzip(out, size, error);
  std::size_t done = 0;
  while (done < size) {
    if (!refill(error)) return -1;
    if (in_at_ == in_end_) break;
    const std::size_t n = std::min(size - done, in_end_ - in_at_);
    std::memcpy(out + done, in_.data() + in_at_, n);
    in_at_ += n;
    done += n;
  }
  return long(done);
}

long TraceFile::read_gzip(char* out, std::size_t size, std::string& error) {
  z_.next_out = reinterpret_cast<Bytef*>(out);
  z_.avail_out = unsigned(size);
  while (z_.avail_out > 0) {
    if (!refill(error)) return -1;
    if (in_at_ == in_end_) {
      if (member_open_) return error = "truncated or damaged gzip data: the file ends inside a gzip member", -1;
      break;
    }
    if (!member_open_) {  // another member follows the last one
      if (inflateReset(&z_) != Z_OK) return error = "damaged gzip data", -1;
      member_open_ = true;
    }
    z_.next_in = in_.data() + in_at_;
    z_.avail_in = unsigned(in_end_ - in_at_);
    const int status = inflate(&z_, Z_NO_FLUSH);
    const std::size_t used = (in_end_ - in_at_) - z_.avail_in;
    in_at_ += used;
    consumed_ += used;
    if (status == Z_STREAM_END) {
      member_open_ = false;
    } else if (status != Z_OK && status != Z_BUF_ERROR) {
      return error = std::string("truncated or damaged gzip data: ") + (z_.msg ? z_.msg : "inflate failed"), -1;
    }
  }
  return long(size - z_.avail_out);
}

}  // namespace profagent::report
