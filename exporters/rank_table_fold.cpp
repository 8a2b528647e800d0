#include "exporters/rank_table_fold.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "exporters/rank_table.h"

namespace profagent::exporters {
namespace {

// An unnamed file (O_TMPFILE: nothing to remove, even if the process is killed), else a named
// one removed at once; close-on-exec either way, so a child the program starts never holds it.
int temporary_fd(std::string& error) {
  const char* dir = std::getenv("TMPDIR");
  if (dir == nullptr || *dir == '\0') dir = "/tmp";
  int fd = ::open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string name = std::string(dir) + "/profagent-rank-XXXXXX";
  fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) {
    error = "cannot make a temporary file in " + std::string(dir) + ": " + std::strerror(errno);
    return -1;
  }
  ::unlink(name.c_str());
  return fd;
}

}  // namespace

bool RankTableFold::open_file() {
  if (file_) return true;
  const int fd = temporary_fd(error_);
  if (fd < 0) return false;
  file_.reset(::fdopen(fd, "w+b"));
  if (!file_) {
    ::close(fd);
    error_ = "cannot open its temporary file";
    return false;
  }
  return true;
}

uint32_t RankTableFold::name_index(const char* collective) {
  for (uint32_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == collective || std::strcmp(names_[i], collective) == 0) return i;
  }
  names_.push_back(collective);
  return uint32_t(names_.size() - 1);
}

void RankTableFold::add(const Trace& part) {
  if (part.collectives.empty() || !error_.empty()) return;
  seen_collectives_ = true;
  if (!open_file()) return;
  for_each_collective_kernel(part, [&](const CollectiveArgs& c, const HostRecord& call, const DeviceRecord& d) {
    if (!error_.empty()) return;
    const Row row{c.comm_hash, c.seq, c.bytes, call.start_ns, d.start_ns, d.end_ns, name_index(c.collective)};
    if (std::fwrite(&row, sizeof row, 1, file_.get()) != 1) {
      error_ = std::string("cannot write its rows to a temporary file: ") + std::strerror(errno);
      return;
    }
    ++rows_;
  });
}

bool RankTableFold::wanted(const Trace& tail) const { return seen_collectives_ || wants_rank_table(tail); }

bool RankTableFold::write(const Trace& tail, const Summaries& distributed, std::string_view why_not, JsonWriter& out) {
  if (!error_.empty()) return false;
  write_rank_table_head(tail, out);
  write_rank_distributed(distributed, why_not, out);
  out.raw(",\"collectives\":[");
  if (file_) {
    if (std::fflush(file_.get()) != 0 || std::fseek(file_.get(), 0, SEEK_SET) != 0) {
      error_ = "cannot read its rows back from the temporary file";
      return false;
    }
    std::vector<Row> batch(4096);
    uint64_t read = 0;
    while (read < rows_) {
      const std::size_t n = std::fread(batch.data(), sizeof(Row), batch.size(), file_.get());
      if (n == 0) {
        error_ = "its temporary file was cut short";
        return false;
      }
      for (std::size_t i = 0; i < n; ++i) {
        const Row& r = batch[i];
        CollectiveArgs args;
        args.comm_hash = r.comm_hash, args.seq = r.seq, args.bytes = r.bytes, args.collective = names_[r.name];
        auto unix_ns = [&](uint64_t ns) { return int64_t(ns) + tail.unix_offset_ns; };
        write_collective_row(args, unix_ns(r.enqueue_ns), unix_ns(r.start_ns), unix_ns(r.end_ns), read + i == 0, out);
      }
      read += n;
    }
  }
  out.raw("]}\n");
  return out.flush();
}

}  // namespace profagent::exporters
