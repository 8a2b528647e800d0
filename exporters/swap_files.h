// A file kept complete on disk while it grows (the partial traces: partial_trace.h,
// partial_perfetto.h). A reader never sees a half-written file, because an append never writes
// the file that has the published name:
//   - a second file, `.<name>.swap`, holds the file one append behind;
//   - an append copies into it the part it lacks (from the published file, by offset), writes
//     the new part over its old tail, then a new tail, and truncates it;
//   - fsync of that file, then the two names are exchanged in one atomic step
//     (renameat2 RENAME_EXCHANGE; where the file system lacks it: link, rename, rename, each
//     step leaving a complete file under the published name), then fsync of the directory.
// So after a crash, or after power loss once the directory's fsync returned, the published name
// holds the file as of an append that published. An append may also leave its part in the swap
// file only, unpublished (a streamed window's segments between partial intervals: no tail, no
// fsync, no exchange); the next publishing append carries it under the name. Every byte is
// written twice (once per file: the swap file catches up once per publish), unless nothing is
// published before the last append.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "exporters/output_file.h"
#include "exporters/output_stream.h"

namespace profagent::exporters {

class SwapFiles {
 public:
  // Writes nothing until the first append. `dir` must outlive this.
  SwapFiles(const OutputDir& dir, std::string name);
  ~SwapFiles();  // closes both files and leaves them on disk
  SwapFiles(const SwapFiles&) = delete;
  SwapFiles& operator=(const SwapFiles&) = delete;

  // What an append writes: false when a write failed.
  using Part = std::function<bool(OutputStream&)>;
  // `body` after the bodies appended so far, then `tail`; the new file is published. "" on
  // success, else one line saying why (the published file is then as it was). Without
  // `publish`, only `body` is written, to the swap file: a later append publishes it.
  std::string append(const Part& body, const Part& tail, bool publish = true);
  // `bytes` over the published file at `offset` (within its body), made durable.
  std::string write_at(uint64_t offset, std::string_view bytes);
  // The published file takes the name `final_name`; both files are closed, the swap deleted.
  std::string rename(const std::string& final_name);
  // Deletes both files (closed first).
  void remove() noexcept;

  std::string location() const { return dir_.location(name_); }
  const std::string& name() const { return name_; }

 private:
  struct File {
    int fd = -1;
    uint64_t end = 0;  // where its body ends (and its tail starts, once published)
  };
  std::string publish();
  void close_both() noexcept;

  const OutputDir& dir_;
  std::string name_;
  std::string swap_name_;  // .<name_>.swap
  File published_;
  File swap_;
};

}  // namespace profagent::exporters
