// A program that looks like a Python the collector cannot read: it exports Py_Version and
// PyGILState_GetThisThreadState as a CPython executable does. Argument "3.12": a newer version;
// "3.11-incomplete": a 3.11 lacking the other symbols the walk needs. Either way the capture
// must give no frames and say so in exactly one log line naming the version. Exit 0 when so.
#include <cstdio>
#include <cstring>
#include <string>

#include "collector/log.h"
#include "collector/python_frames.h"

namespace pc = profagent::collector;

extern "C" {
__attribute__((visibility("default"))) unsigned long Py_Version = 0;
__attribute__((visibility("default"))) void* PyGILState_GetThisThreadState() { return nullptr; }
}

namespace {
int g_lines = 0;
std::string g_last;
void keep(pc::LogLevel, std::string_view message) noexcept {
  ++g_lines;
  g_last = message;
}
}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  const char* expected = mode == "3.12" ? "Python 3.12.2" : "Python 3.11.9 lacks the symbols";
  Py_Version = mode == "3.12" ? 0x030C02F0 : 0x030B09F0;
  pc::set_log_sink(keep);
  pc::set_log_level(pc::LogLevel::Trace);  // exactly one line, of any level
  pc::PyFrameRef frames[4];
  size_t captured = 0;
  for (int i = 0; i < 3; ++i) captured += pc::capture_python_frames(frames, 4);
  bool supported = pc::python_frames_supported();
  pc::set_log_sink(nullptr);
  bool ok = !supported && captured == 0 && g_lines == 1 && g_last.find(expected) != std::string::npos;
  std::printf("%s: %d line(s), last \"%s\"\n", ok ? "ok" : "FAILED", g_lines, g_last.c_str());
  return ok ? 0 : 1;
}
