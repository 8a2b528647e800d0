// The bytes of a saved trace, plain or gzip-compressed, read in chunks. For gzip it also counts
// the compressed bytes that gave them, so that a gzip bomb (a small file that expands ~1000
// times) is seen after the first megabytes rather than after it has filled the memory. Gzip
// members one after another (`cat a.gz b.gz`) are one stream, as gzip itself reads them.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace profagent::report {

class TraceFile {
 public:
  TraceFile() = default;
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  ~TraceFile();

  // False with `error` when it cannot be opened or read.
  bool open(const std::string& path, std::string& error);
  // Up to `size` bytes into `out`: how many (0 at the end), or -1 with `error`.
  long read(char* out, std::size_t size, std::string& error);

  bool gzip() const { return gzip_; }
  uint64_t file_bytes() const { return file_bytes_; }
  uint64_t compressed_read() const { return consumed_; }  // gzip: compressed bytes behind what read() gave

 private:
  bool refill(std::string& error);
  long read_gzip(char* out, std::size_t size, std::string& error);

  int fd_ = -1;
  bool gzip_ = false;
  bool inflating_ = false;   // z_ initialised
  bool member_open_ = false; // inside a gzip member (its end not reached)
  bool eof_ = false;         // the file has no more bytes
  uint64_t file_bytes_ = 0;
  uint64_t consumed_ = 0;
  z_stream z_{};
  std::vector<unsigned char> in_;
  std::size_t in_at_ = 0, in_end_ = 0;  // unread input bytes: in_[in_at_, in_end_)
};

}  // namespace profagent::report
