// Safe output: atomic replace, no symlink followed, errors leave no file behind.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "exporters/exporter.h"
#include "exporters/output_file.h"
#include "exporters/quiet_write.h"
#include "synthetic_trace.h"

using namespace profagent;
using namespace profagent::exporters;

namespace {

// A fresh directory under the build's temp area, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/profagent_exporters_XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.insert(n);
    }
    ::closedir(d);
  }
  return names;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string write_one(OutputSink& sink, const std::string& name, const std::string& body) {
  std::string error;
  auto stream = sink.open(name, &error);
  if (!stream) return error;
  stream->write(body.data(), body.size());
  return stream->commit();
}

}  // namespace

TEST_CASE("missing directories are created and files appear under their names",
          "[exporters][output]") {
  TempDir tmp;
  std::string error;
  auto dir = OutputDir::create(tmp.path() + "/a/b/c/", &error);
  REQUIRE(dir);
  CHECK(error.empty());
  CHECK(write_one(*dir, "x.json", "{}").empty());
  CHECK(entries(tmp.path() + "/a/b/c") == std::set<std::string>{"x.json"});
  CHECK(read(tmp.path() + "/a/b/c/x.json") == "{}");
  struct stat st{};
  REQUIRE(::stat((tmp.path() + "/a/b/c/x.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == (0644 & ~[] { mode_t m = ::umask(0); ::umask(m); return m; }()));
}

TEST_CASE("an existing file is never replaced: the next free number is taken, nothing is visible before commit",
          "[exporters][output]") {
  TempDir tmp;
  std::string error;
  auto dir = OutputDir::create(tmp.path(), &error);
  REQUIRE(dir);
  REQUIRE(write_one(*dir, "h.1.w1.trace.json", "old contents").empty());
  auto stream = dir->open("h.1.w1.trace.json", &error);
  REQUIRE(stream);
  stream->write("new", 3);
  CHECK(entries(tmp.path()) == std::set<std::string>{"h.1.w1.trace.json"});  // the new one is unnamed
  CHECK(stream->commit().empty());
  CHECK(stream->published_name() == "h.1.w1-2.trace.json");
  CHECK(read(tmp.path() + "/h.1.w1.trace.json") == "old contents");
  CHECK(read(tmp.path() + "/h.1.w1-2.trace.json") == "new");
  CHECK(entries(tmp.path()) == std::set<std::string>{"h.1.w1.trace.json", "h.1.w1-2.trace.json"});
  REQUIRE(write_one(*dir, "t.json", "a").empty());
  auto again = dir->open("t.json", &error);
  REQUIRE(again);
  CHECK(again->commit().empty());
  CHECK(again->published_name() == "t-2.json");
}

TEST_CASE("a stream dropped without commit leaves nothing", "[exporters][output]") {
  TempDir tmp;
  std::string error;
  auto dir = OutputDir::create(tmp.path(), &error);
  REQUIRE(dir);
  {
    auto stream = dir->open("gone.json", &error);
    REQUIRE(stream);
    stream->write("partial", 7);
  }
  CHECK(entries(tmp.path()).empty());
}

TEST_CASE("a process killed while writing leaves nothing in the directory", "[exporters][output]") {
  TempDir tmp;
  std::string error;
  auto dir = OutputDir::create(tmp.path(), &error);
  REQUIRE(dir);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // as a pool worker terminated by SIGTERM while it writes its trace at exit
    auto stream = dir->open("killed.json", &error);
    if (stream) stream->write("partial", 7);
    ::kill(::getpid(), SIGKILL);
    ::_exit(1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  CHECK(entries(tmp.path()).empty());
}

TEST_CASE("a symlink at the final name is neither followed nor replaced", "[exporters][output]") {
  TempDir tmp;
  const std::string victim = tmp.path() + "/victim";
  { std::ofstream(victim) << "precious"; }
  REQUIRE(::mkdir((tmp.path() + "/out").c_str(), 0755) == 0);
  REQUIRE(::symlink(victim.c_str(), (tmp.path() + "/out/t.json").c_str()) == 0);
  std::string error;
  auto dir = OutputDir::create(tmp.path() + "/out", &error);
  REQUIRE(dir);
  CHECK(write_one(*dir, "t.json", "trace").empty());
  CHECK(read(victim) == "precious");
  struct stat st{};
  REQUIRE(::lstat((tmp.path() + "/out/t.json").c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  REQUIRE(::lstat((tmp.path() + "/out/t-2.json").c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK(read(tmp.path() + "/out/t-2.json") == "trace");
}

TEST_CASE("symlinks planted at temporary names are skipped, never followed",
          "[exporters][output]") {
  TempDir tmp;
  const std::string victim = tmp.path() + "/victim";
  { std::ofstream(victim) << "precious"; }
  REQUIRE(::mkdir((tmp.path() + "/out").c_str(), 0755) == 0);
  // Plant every temporary name the next attempts could use (the counter is process-wide,
  // so cover a generous range of it).
  for (int n = 0; n < 200; ++n) {
    const std::string tmp_name = tmp.path() + "/out/.t.json." + std::to_string(::getpid()) + "." +
                                 std::to_string(n) + ".tmp";
    ::symlink(victim.c_str(), tmp_name.c_str());
  }
  std::string error;
  auto dir = OutputDir::create(tmp.path() + "/out", &error);
  REQUIRE(dir);
  const std::string result = write_one(*dir, "t.json", "trace");
  CHECK(read(victim) == "precious");
  // Either a free name was found past the planted ones, or a clear error: never the victim.
  if (result.empty()) {
    CHECK(read(tmp.path() + "/out/t.json") == "trace");
  } else {
    CHECK(result.find("cannot create a file") != std::string::npos);
    CHECK(entries(tmp.path() + "/out").count("t.json") == 0);
  }
}

TEST_CASE("a symlinked output directory and names with '/' are refused", "[exporters][output]") {
  TempDir tmp;
  REQUIRE(::mkdir((tmp.path() + "/real").c_str(), 0755) == 0);
  REQUIRE(::symlink((tmp.path() + "/real").c_str(), (tmp.path() + "/link").c_str()) == 0);
  std::string error;
  CHECK_FALSE(OutputDir::create(tmp.path() + "/link", &error));
  CHECK(error.find("symbolic link") != std::string::npos);
  auto dir = OutputDir::create(tmp.path() + "/real", &error);
  REQUIRE(dir);
  CHECK_FALSE(write_one(*dir, "../escape.json", "x").empty());
  CHECK_FALSE(write_one(*dir, "..", "x").empty());
  CHECK(entries(tmp.path()) == std::set<std::string>{"real", "link"});
  CHECK(entries(tmp.path() + "/real").empty());
}

TEST_CASE("a symlink on the way is followed only when this user or root owns it", "[exporters][output]") {
  TempDir tmp;
  const std::string target = tmp.path() + "/target";
  REQUIRE(::mkdir(target.c_str(), 0755) == 0);
  REQUIRE(::symlink(target.c_str(), (tmp.path() + "/mine").c_str()) == 0);
  REQUIRE(::symlink("target/../target", (tmp.path() + "/relative").c_str()) == 0);
  std::string error;
  // Own links, absolute and relative (with ".."), then components still missing: created.
  auto dir = OutputDir::create(tmp.path() + "/mine/a/b", &error);
  REQUIRE(dir);
  CHECK(write_one(*dir, "t.json", "{}").empty());
  CHECK(read(target + "/a/b/t.json") == "{}");
  CHECK(OutputDir::create(tmp.path() + "/relative/./a//c/", &error));
  CHECK(entries(target + "/a") == std::set<std::string>{"b", "c"});
  if (::geteuid() != 0) {
    WARN("not root: a link another user owns cannot be made here");
    return;
  }
  REQUIRE(::symlink(target.c_str(), (tmp.path() + "/theirs").c_str()) == 0);
  REQUIRE(::lchown((tmp.path() + "/theirs").c_str(), 65534, 65534) == 0);
  // Also when reached through an own link to the directory holding it.
  REQUIRE(::symlink(tmp.path().c_str(), (tmp.path() + "/up").c_str()) == 0);
  for (const std::string& path : {tmp.path() + "/theirs/x", tmp.path() + "/up/theirs/x"}) {
    error.clear();
    CHECK_FALSE(OutputDir::create(path, &error));
    CHECK(error.find("symbolic link owned by uid 65534") != std::string::npos);
    CHECK(error.find('\n') == std::string::npos);
  }
  CHECK(entries(target) == std::set<std::string>{"a"});  // nothing created behind it
}

TEST_CASE("an unusable directory gives one error line and no file", "[exporters][output]") {
  TempDir tmp;
  { std::ofstream(tmp.path() + "/plain") << "a file, not a directory"; }
  ExportOptions o;
  o.output_dir = tmp.path() + "/plain/sub";
  const ExportResult r = export_window(test::sample_trace(), o);
  CHECK(r.paths.empty());
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].find("cannot create directory") != std::string::npos);
  CHECK(r.errors[0].find('\n') == std::string::npos);
  CHECK(!r.table.empty());  // the table still reaches stderr
  CHECK(r.written_line() == "wrote nothing");
  if (::geteuid() != 0) {  // root ignores permission bits
    REQUIRE(::mkdir((tmp.path() + "/ro").c_str(), 0555) == 0);
    o.output_dir = tmp.path() + "/ro";
    const ExportResult ro = export_window(test::sample_trace(), o);
    CHECK(ro.paths.empty());
    CHECK(ro.errors.size() == 3);
    CHECK(entries(tmp.path() + "/ro").empty());
  }
}

TEST_CASE("a write error (EFBIG) removes the temporary and reports one line",
          "[exporters][output]") {
  TempDir tmp;
  std::string error;
  auto dir = OutputDir::create(tmp.path(), &error);
  REQUIRE(dir);
  rlimit old{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 64 * 1024;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::string result = write_one(*dir, "big.json", std::string(1 << 20, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  CHECK(result.find("big.json") != std::string::npos);
  CHECK(result.find("too large") != std::string::npos);  // strerror(EFBIG)
  CHECK(entries(tmp.path()).empty());
}

namespace {
volatile sig_atomic_t g_program_handler_calls = 0;
void program_handler(int) { g_program_handler_calls = g_program_handler_calls + 1; }

bool is_pending(int number) {
  sigset_t pending{};
  return ::sigpending(&pending) == 0 && ::sigismember(&pending, number) == 1;
}
}  // namespace

// The program's own SIGXFSZ handler (or its default action, which ends the process with a core
// dump) must never see the agent's writes past `ulimit -f`.
TEST_CASE("a file past the size limit fails with EFBIG and raises no SIGXFSZ in the program", "[exporters][output]") {
  TempDir tmp;
  std::string error;
  auto dir = OutputDir::create(tmp.path(), &error);
  REQUIRE(dir);
  rlimit old{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  g_program_handler_calls = 0;
  const auto old_handler = ::signal(SIGXFSZ, program_handler);
  rlimit small = old;
  small.rlim_cur = 64 * 1024;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::string result = write_one(*dir, "big.json", std::string(1 << 20, 'x'));
  const bool left_pending = is_pending(SIGXFSZ);
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  CHECK(result.find("too large") != std::string::npos);
  CHECK(g_program_handler_calls == 0);
  CHECK_FALSE(left_pending);
  CHECK(entries(tmp.path()).empty());
}

TEST_CASE("write_without_signals: a pipe without reader gives EPIPE, no SIGPIPE, one pending before stays",
          "[exporters][output]") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  ::close(fds[0]);
  g_program_handler_calls = 0;
  const auto old_handler = ::signal(SIGPIPE, program_handler);
  const ssize_t written = write_without_signals(fds[1], "x", 1);
  const int error = errno;
  CHECK(written == -1);
  CHECK(error == EPIPE);
  CHECK(g_program_handler_calls == 0);
  CHECK_FALSE(is_pending(SIGPIPE));
  // The program's own SIGPIPE, pending while it blocks it, is not taken by the agent's write.
  sigset_t pipe_only{}, before{};
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &before);
  ::raise(SIGPIPE);
  CHECK(write_without_signals(fds[1], "x", 1) == -1);
  CHECK(is_pending(SIGPIPE));
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);  // delivered now, to the program's handler
  CHECK(g_program_handler_calls == 1);
  ::signal(SIGPIPE, old_handler);
  ::close(fds[1]);
}

TEST_CASE("export_window writes the three files atomically into the directory",
          "[exporters][output]") {
  TempDir tmp;
  ExportOptions o;
  o.output_dir = tmp.path() + "/out";
  const ExportResult r = export_window(test::sample_trace(), o);
  CHECK(r.ok());
  CHECK(entries(o.output_dir) == std::set<std::string>{"node7.4242.r3.w1.trace.json",
                                                       "node7.4242.r3.w1.table.txt",
                                                       "node7.4242.r3.w1.summary.ndjson"});
  CHECK(r.paths.front() == o.output_dir + "/node7.4242.r3.w1.trace.json");
  CHECK(read(o.output_dir + "/node7.4242.r3.w1.table.txt") == r.table);
  CHECK(r.trace_events > 20);
  CHECK(r.trace_bytes == read(r.paths.front()).size());
}
