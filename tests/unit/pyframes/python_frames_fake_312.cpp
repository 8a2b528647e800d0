// A program that looks like a CPython 3.12 interpreter to the collector: it exports the symbols
// the frame walk looks up, and its "interpreter" is synthetic 3.12 frame memory built from the
// structs transcribed from 3.12's headers (cpython_structs.h). It runs the life of a 3.12 process
// under the agent: captures before the start-up check give no frames (counted, one line); the
// check with the frames the program knows passes and frames come; a check that finds another
// line turns them off again (one line). Exit 0 when every step is as expected.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "collector/log.h"
#include "collector/python_frames.h"
#include "tests/unit/pyframes/cpython_structs.h"

namespace pc = profagent::collector;
using namespace cpython;  // NOLINT: the transcribed structs read as CPython names them

namespace {
uint8_t g_interpreter;
v312::PyThreadState g_tstate{};
}  // namespace

extern "C" {
__attribute__((visibility("default"))) unsigned long Py_Version = 0x030C03F0;  // 3.12.3
__attribute__((visibility("default"))) uint8_t PyCode_Type[64], PyUnicode_Type[64], PyBytes_Type[64];
__attribute__((visibility("default"))) void* PyGILState_GetThisThreadState() { return &g_tstate; }
__attribute__((visibility("default"))) int _Py_IsFinalizing() { return 0; }
__attribute__((visibility("default"))) void* PyInterpreterState_Main() { return &g_interpreter; }
__attribute__((visibility("default"), noinline)) int _PyEval_EvalFrameDefault(int x) { return x * 3 + 1; }
}

namespace {

std::vector<std::string> g_lines;
void keep(pc::LogLevel, std::string_view message) noexcept { g_lines.emplace_back(message); }

int g_failures = 0;
void expect(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  g_failures += !ok;
}

bool said(size_t count, const char* text) {
  return g_lines.size() == count && g_lines.back().find(text) != std::string::npos;
}

}  // namespace

int main() {
  static Str<Ascii312> file(PyUnicode_Type, "fake312.py", kCompactAscii), main_name(PyUnicode_Type, "main", kCompactAscii),
      step_name(PyUnicode_Type, "step", kCompactAscii), shim_name(PyUnicode_Type, "<shim>", kCompactAscii);
  static Bytes table(PyBytes_Type, kLocations), shim_table(PyBytes_Type, {location(15, 1)});
  static v312::PyCodeObject main_code{}, step_code{}, shim_code{};
  make_code(main_code, PyCode_Type, main_name.address(), file.address(), table, 1, 1);
  make_code(step_code, PyCode_Type, step_name.address(), file.address(), table, 40, 1);
  make_code(shim_code, PyCode_Type, shim_name.address(), file.address(), shim_table, 0, 0);
  static v312::_PyInterpreterFrame shim{}, f_main{}, f_step{};
  shim.f_code = &shim_code;
  shim.owner = 3;  // FRAME_OWNED_BY_CSTACK: where the eval run of main began
  f_main.f_code = &main_code;
  f_main.previous = &shim;
  f_main.prev_instr = main_code.co_code_adaptive + 3;  // line 4
  f_step.f_code = &step_code;
  f_step.previous = &f_main;
  f_step.prev_instr = step_code.co_code_adaptive + 1;  // line 41
  static v312::_PyCFrame cframe{&f_step, nullptr};
  g_tstate.interp = &g_interpreter;
  g_tstate.cframe = &cframe;

  pc::set_log_sink(keep);
  pc::PyFrameRef frames[8];
  expect(pc::python_frames_supported(), "3.12 is a version whose frames can be read");
  expect(pc::capture_python_frames(frames, 8) == 0 && pc::python_frame_counters().unchecked == 1,
         "before the check: no frames, one counted");
  expect(said(1, "Python 3.12.3: no Python frames in stacks"), "before the check: one line");
  pc::capture_python_frames(frames, 8);
  expect(g_lines.size() == 1, "said once");

  const uintptr_t codes[] = {reinterpret_cast<uintptr_t>(&step_code), reinterpret_cast<uintptr_t>(&main_code)};
  expect(pc::check_python_frames(codes, 2, 41, "step"), "the check with the known frames passes");
  const size_t n = pc::capture_python_frames(frames, 8);
  pc::PySourceLocation where;
  expect(n == 2 && pc::symbolize_python_frame(frames[0], &where) && where.function == "step" && where.line == 41 &&
             where.file == "fake312.py" && (frames[1].flags & pc::kPyFrameEntry),
         "after it: step at line 41, then main, the entry of its eval run");

  expect(!pc::check_python_frames(codes, 2, 42, "step"), "a check that finds another line fails");
  expect(said(2, "(another line: 2 frames read, 2 expected)"), "and says so once");
  expect(pc::capture_python_frames(frames, 8) == 0 && !pc::python_frames_supported(), "frames are off from then on");
  pc::set_log_sink(nullptr);
  return g_failures == 0 ? 0 : 1;
}
