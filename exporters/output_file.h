// Safe file output: one directory, files appear atomically under their final names.
//
// - The directory is created if missing (mkdir -p, mode 0755 before umask: the files are
//   meant to be read by the user's tools and colleagues; nothing secret is in them), reached
//   one component at a time (output_dir_walk.h: a symbolic link on the way is followed only
//   when the user running or root owns it) and held open with O_DIRECTORY|O_NOFOLLOW, so every
//   later operation is relative to that one inode: a symlink swapped in for the directory, or a
//   name with '/', cannot redirect a write.
// - Each file is written to a fresh hidden temporary (".<name>.<pid>.<n>.tmp", created with
//   O_CREAT|O_EXCL|O_NOFOLLOW, so a planted file or symlink is never opened), with large
//   write(2) calls, every result checked; then renameat() to the final name, which replaces
//   a file or a symlink at that name without following it.
// - On any error (ENOSPC, EFBIG, EIO...) the temporary is removed and one line says why; a
//   half-written file never appears under the final name. A file that reaches the program's
//   size limit (`ulimit -f`) fails with EFBIG and never raises SIGXFSZ (quiet_write.h).
// - No fsync: the goal is a consistent file after the process dies, not after power loss;
//   an fsync per file would add seconds at exit on network file systems.
#pragma once

#include <memory>
#include <string>

#include "exporters/output_stream.h"

namespace profagent::exporters {

class OutputDir final : public OutputSink {
 public:
  // Creates (mkdir -p) and opens `path`. nullptr and *error set on failure. The last path
  // component must not be a symlink; earlier ones may be, when owned by the effective user or
  // root (output_dir_walk.h).
  static std::unique_ptr<OutputDir> create(const std::string& path, std::string* error);
  ~OutputDir() override;
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  // `name` must be a plain file name (no '/', not "." or "..", not empty).
  std::unique_ptr<OutputStream> open(const std::string& name, std::string* error) override;
  std::string location(const std::string& name) const override { return path_ + "/" + name; }
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }  // the directory, for writers that manage their own files (partial_trace.h)

 private:
  OutputDir(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

}  // namespace profagent::exporters
