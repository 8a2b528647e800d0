// The byte seam between exporters and where their bytes go (disk, or memory for tests).
//
// A format writes one file through an OutputStream; an OutputSink hands out one stream per
// file name. The directory sink (output_file.h) writes atomically to disk; the memory sink
// keeps the bytes for tests. Nothing here throws: errors are sticky and reported as one line.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace profagent::exporters {

class OutputStream {
 public:
  virtual ~OutputStream() = default;
  // Appends bytes; false once any write has failed (the error is kept for commit()).
  virtual bool write(const char* data, std::size_t size) = 0;
  // Makes the file visible under its final name. Returns "" or a one-line error. A stream
  // destroyed without a successful commit leaves nothing behind.
  virtual std::string commit() = 0;
  // After a successful commit: the name the file really got when it differs from the name
  // asked for (an existing file is never replaced; see OutputDir), else "".
  virtual std::string published_name() const { return {}; }
};

class OutputSink {
 public:
  virtual ~OutputSink() = default;
  // nullptr and *error set when the file cannot be started.
  virtual std::unique_ptr<OutputStream> open(const std::string& name, std::string* error) = 0;
  // How a written file is reported to the user (a path for files, the name in memory).
  virtual std::string location(const std::string& name) const = 0;
};

// Appends into a string the caller owns (a report assembled in memory before it is printed).
class StringStream final : public OutputStream {
 public:
  explicit StringStream(std::string& out) : out_(out) {}
  bool write(const char* data, std::size_t size) override { return out_.append(data, size), true; }
  std::string commit() override { return {}; }

 private:
  std::string& out_;
};

// Keeps each committed file in memory: the sink unit tests read back.
class MemorySink final : public OutputSink {
 public:
  std::unique_ptr<OutputStream> open(const std::string& name, std::string* error) override;
  std::string location(const std::string& name) const override { return name; }
  const std::map<std::string, std::string>& files() const { return files_; }

 private:
  std::map<std::string, std::string> files_;
};

}  // namespace profagent::exporters
