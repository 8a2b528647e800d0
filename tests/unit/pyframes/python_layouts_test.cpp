// The frame walk over synthetic frame memory laid out as each CPython version lays it out, for
// the versions this machine cannot run (3.10, 3.12, 3.13), from the structs transcribed from
// their headers (cpython_structs.h; 3.13's _Py_DebugOffsets from
// Include/internal/pycore_runtime.h at v3.13.0): the compiler places the fields, and the walk,
// given the product's layout table (collector/python_layouts.h), must find every frame, name and
// line.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "collector/python_layouts.h"
#include "collector/python_linetable.h"
#include "collector/python_walk.h"
#include "tests/unit/pyframes/cpython_structs.h"

namespace pc = profagent::collector;
using namespace cpython;  // NOLINT: the transcribed structs read as CPython names them

namespace {

// Fake type objects: only their addresses matter.
uint8_t g_code_type, g_str_type, g_bytes_type, g_frame_type, g_interpreter;

pc::PyTypeAddresses types() {
  pc::PyTypeAddresses t;
  t.code = reinterpret_cast<uintptr_t>(&g_code_type);
  t.str = reinterpret_cast<uintptr_t>(&g_str_type);
  t.bytes = reinterpret_cast<uintptr_t>(&g_bytes_type);
  return t;
}

pc::PyWalk walk_of(const pc::PyLayout& layout) {
  pc::PyWalk walk;
  walk.layout = &layout;
  walk.types = types();
  walk.main_interpreter = reinterpret_cast<uintptr_t>(&g_interpreter);
  return walk;
}

struct Seen {
  std::string function;
  int line;
  bool entry;
};

std::vector<Seen> walk(const pc::PyLayout& layout, const void* tstate) {
  pc::PyFrameRef frames[16];
  const size_t n = pc::walk_python_frames(walk_of(layout), reinterpret_cast<uintptr_t>(tstate), frames, 16);
  std::vector<Seen> seen;
  for (size_t i = 0; i < n; ++i) {
    REQUIRE(frames[i].code != 0);
    const auto& code = *reinterpret_cast<const pc::PyCodeInfo*>(frames[i].code);
    seen.push_back({code.function, pc::python_line_at(layout.lines, code, frames[i].instr_offset),
                    (frames[i].flags & pc::kPyFrameEntry) != 0});
  }
  return seen;
}

}  // namespace

TEST_CASE("3.10 layout: PyThreadState.frame, f_back, f_lasti in code units, every frame its own eval run") {
  const pc::PyLayout& layout = *pc::compiled_python_layout(10);
  CHECK(layout.tstate_frame == offsetof(v310::PyThreadState, frame));
  CHECK(layout.frame_previous == offsetof(v310::PyFrameObject, f_back));
  CHECK(layout.frame_code == offsetof(v310::PyFrameObject, f_code));
  CHECK(layout.frame_instr == offsetof(v310::PyFrameObject, f_lasti));
  CHECK(layout.code_firstlineno == offsetof(v310::PyCodeObject, co_firstlineno));
  CHECK(layout.code_filename == offsetof(v310::PyCodeObject, co_filename));
  CHECK(layout.code_name == offsetof(v310::PyCodeObject, co_name));
  CHECK(layout.code_linetable == offsetof(v310::PyCodeObject, co_linetable));
  CHECK(layout.str_ascii_data == sizeof(Ascii310));

  static Str<Ascii310> file(&g_str_type, "train310.py", kCompactAscii | kReady), outer_name(&g_str_type, "outer", kCompactAscii | kReady),
      inner_name(&g_str_type, "inner", kCompactAscii | kReady), fresh_name(&g_str_type, "fresh", kCompactAscii | kReady);
  // PEP 626 pairs: bytes 0-5 on the first line, 6-9 no line, 10-13 two lines on (an empty
  // range's delta still counts).
  static Bytes table(&g_bytes_type, {6, 0, 4, uint8_t(-128), 0, 1, 4, 1});
  static v310::PyCodeObject outer{}, inner{}, fresh{};
  auto code = [&](v310::PyCodeObject& c, Str<Ascii310>& name, int line) {
    c.ob_base.ob_type = &g_code_type;
    c.co_name = name.address();
    c.co_filename = file.address();
    c.co_linetable = &table.object;
    c.co_firstlineno = line;
  };
  code(outer, outer_name, 10);
  code(inner, inner_name, 20);
  code(fresh, fresh_name, 30);
  static v310::PyFrameObject f_outer{}, f_inner{}, f_fresh{};
  auto frame = [](v310::PyFrameObject& f, v310::PyFrameObject* back, v310::PyCodeObject& c, int lasti) {
    f.ob_base.ob_base.ob_type = &g_frame_type;
    f.f_back = back;
    f.f_code = &c;
    f.f_lasti = lasti;
  };
  frame(f_outer, nullptr, outer, 5);   // byte 10: two lines on
  frame(f_inner, &f_outer, inner, 1);  // byte 2: the first line
  frame(f_fresh, &f_inner, fresh, -1); // not begun: left out
  static v310::PyThreadState tstate{nullptr, nullptr, &g_interpreter, &f_fresh};

  const auto seen = walk(layout, &tstate);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].function == "inner");
  CHECK(seen[0].line == 20);
  CHECK(seen[1].function == "outer");
  CHECK(seen[1].line == 12);
  CHECK(seen[0].entry);
  CHECK(seen[1].entry);
}

TEST_CASE("3.10 line table: ranges, no-line ranges and empty ranges as PyCode_Addr2Line reads them") {
  const std::vector<uint8_t> table = {4, 0, 0, 3, 2, uint8_t(-128), 6, uint8_t(-2), 2, 5};
  auto line = [&](int offset) { return pc::python310_line_at(table.data(), table.size(), 100, offset); };
  CHECK(line(-2) == 100);  // f_lasti -1: the first line
  CHECK(line(0) == 100);
  CHECK(line(3) == 100);
  CHECK(line(4) == -1);   // the empty range moved the line by 3, the next range has none
  CHECK(line(6) == 101);  // 100 + 3 - 2
  CHECK(line(11) == 101);
  CHECK(line(12) == 106);
  CHECK(line(14) == -1);  // past the table
}

TEST_CASE("3.12 layout: cframe->current_frame, shim frames mark where each eval run began") {
  const pc::PyLayout& layout = *pc::compiled_python_layout(12);
  CHECK(layout.tstate_frame == offsetof(v312::PyThreadState, cframe));
  CHECK(layout.cframe_current_frame == int(offsetof(v312::_PyCFrame, current_frame)));
  CHECK(layout.frame_code == offsetof(v312::_PyInterpreterFrame, f_code));
  CHECK(layout.frame_previous == offsetof(v312::_PyInterpreterFrame, previous));
  CHECK(layout.frame_instr == offsetof(v312::_PyInterpreterFrame, prev_instr));
  CHECK(layout.frame_owner == int(offsetof(v312::_PyInterpreterFrame, owner)));
  CHECK(layout.code_firstlineno == offsetof(v312::PyCodeObject, co_firstlineno));
  CHECK(layout.code_filename == offsetof(v312::PyCodeObject, co_filename));
  CHECK(layout.code_name == offsetof(v312::PyCodeObject, co_name));
  CHECK(layout.code_linetable == offsetof(v312::PyCodeObject, co_linetable));
  CHECK(layout.code_firsttraceable == int(offsetof(v312::PyCodeObject, _co_firsttraceable)));
  CHECK(layout.code_adaptive == int(offsetof(v312::PyCodeObject, co_code_adaptive)));
  CHECK(layout.str_ascii_data == sizeof(Ascii312));

  static Str<Ascii312> file(&g_str_type, "train312.py", kCompactAscii), main_name(&g_str_type, "main", kCompactAscii),
      step_name(&g_str_type, "step", kCompactAscii), callback_name(&g_str_type, "callback", kCompactAscii), new_name(&g_str_type, "new", kCompactAscii),
      shim_name(&g_str_type, "<shim>", kCompactAscii);
  static Bytes table(&g_bytes_type, kLocations), shim_table(&g_bytes_type, {location(15, 1)});
  static v312::PyCodeObject main_code{}, step_code{}, callback_code{}, new_code{}, shim_code{};
  make_code(main_code, &g_code_type, main_name.address(), file.address(), table, 1, 1);
  make_code(step_code, &g_code_type, step_name.address(), file.address(), table, 40, 1);
  make_code(callback_code, &g_code_type, callback_name.address(), file.address(), table, 70, 0);
  make_code(new_code, &g_code_type, new_name.address(), file.address(), table, 90, 2);
  make_code(shim_code, &g_code_type, shim_name.address(), file.address(), shim_table, 0, 0);
  // Innermost first: `new` still in its prologue (left out), callback (run by a C call:
  // its own eval run, a shim frame below it), step and main (one eval run, a shim below main).
  static v312::_PyInterpreterFrame shim_outer{}, f_main{}, f_step{}, shim_inner{}, f_callback{}, f_new{};
  auto frame = [](v312::_PyInterpreterFrame& f, v312::PyCodeObject& code, v312::_PyInterpreterFrame* previous,
                  int unit, char owner) {
    f.f_code = &code;
    f.previous = previous;
    f.prev_instr = code.co_code_adaptive + unit;
    f.owner = owner;
  };
  frame(shim_outer, shim_code, nullptr, 0, 3);
  frame(f_main, main_code, &shim_outer, 3, 0);          // unit 3: first line + 3
  frame(f_step, step_code, &f_main, 1, 0);              // unit 1: first line + 1
  frame(shim_inner, shim_code, &f_step, 0, 3);
  frame(f_callback, callback_code, &shim_inner, 0, 1);  // a generator's frame at unit 0
  frame(f_new, new_code, &f_callback, 1, 0);            // before its first traceable unit
  static v312::_PyCFrame cframe{&f_new, nullptr};
  static v312::PyThreadState tstate{};
  tstate.interp = &g_interpreter;
  tstate.cframe = &cframe;

  const auto seen = walk(layout, &tstate);
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].function == "callback");
  CHECK(seen[0].line == 70);
  CHECK(seen[0].entry);
  CHECK(seen[1].function == "step");
  CHECK(seen[1].line == 41);
  CHECK_FALSE(seen[1].entry);
  CHECK(seen[2].function == "main");
  CHECK(seen[2].line == 4);
  CHECK(seen[2].entry);
}

namespace {

// 3.13's _Py_DebugOffsets as the interpreter fills it (Python/pylifecycle.c's
// _Py_DebugOffsets initialiser at v3.13.0), from the transcribed structs.
pc::PyDebugOffsets313 debug_offsets_313() {
  pc::PyDebugOffsets313 d{};
  std::memcpy(d.cookie, "xdebugpy", 8);
  d.version = 0x030D02F0;  // 3.13.2 final
  d.thread_state.interp = offsetof(v313::PyThreadState, interp);
  d.thread_state.current_frame = offsetof(v313::PyThreadState, current_frame);
  d.interpreter_frame.previous = offsetof(v313::_PyInterpreterFrame, previous);
  d.interpreter_frame.executable = offsetof(v313::_PyInterpreterFrame, f_code);
  d.interpreter_frame.instr_ptr = offsetof(v313::_PyInterpreterFrame, prev_instr);
  d.interpreter_frame.owner = offsetof(v313::_PyInterpreterFrame, owner);
  d.code_object.filename = offsetof(v313::PyCodeObject, co_filename);
  d.code_object.name = offsetof(v313::PyCodeObject, co_name);
  d.code_object.linetable = offsetof(v313::PyCodeObject, co_linetable);
  d.code_object.firstlineno = offsetof(v313::PyCodeObject, co_firstlineno);
  d.code_object.co_code_adaptive = offsetof(v313::PyCodeObject, co_code_adaptive);
  d.pyobject.ob_type = offsetof(PyObject, ob_type);
  d.bytes_object.ob_size = offsetof(PyVarObject, ob_size);
  d.bytes_object.ob_sval = offsetof(PyBytesObject, ob_sval);
  d.unicode_object.state = offsetof(Ascii312, state);
  d.unicode_object.length = offsetof(Ascii312, length);
  d.unicode_object.asciiobject_size = sizeof(Ascii312);
  return d;
}

}  // namespace

TEST_CASE("3.13 debug offsets: the struct as 3.13 declares it, every offset used taken from it") {
  // Fourteen 8-byte words of runtime and interpreter offsets come before the thread's.
  CHECK(offsetof(pc::PyDebugOffsets313, thread_state.current_frame) == 184);
  CHECK(offsetof(pc::PyDebugOffsets313, interpreter_frame.instr_ptr) == 248);
  CHECK(offsetof(pc::PyDebugOffsets313, code_object.co_code_adaptive) == 344);
  CHECK(offsetof(pc::PyDebugOffsets313, bytes_object.ob_sval) == 528);
  CHECK(offsetof(pc::PyDebugOffsets313, unicode_object.asciiobject_size) == 560);
  CHECK(sizeof(pc::PyDebugOffsets313) == 568);

  const pc::PyLayout compiled = *pc::compiled_python_layout(13);
  pc::PyLayout layout = compiled;
  const pc::PyDebugOffsets313 runtime = debug_offsets_313();
  const char* why = nullptr;
  REQUIRE(pc::apply_debug_offsets(&runtime, 0x030D0000, &layout, &why));
  // The compiled-in 3.13 table agrees with the transcribed headers everywhere.
  CHECK(compiled.tstate_frame == layout.tstate_frame);
  CHECK(compiled.frame_instr == layout.frame_instr);
  CHECK(compiled.frame_owner == layout.frame_owner);
  CHECK(compiled.code_filename == layout.code_filename);
  CHECK(compiled.code_linetable == layout.code_linetable);
  CHECK(compiled.code_adaptive == layout.code_adaptive);
  CHECK(compiled.code_firsttraceable == int(offsetof(v313::PyCodeObject, _co_firsttraceable)));
  CHECK(compiled.str_ascii_data == layout.str_ascii_data);

  // Offsets come from the interpreter, not from the table: move one and the layout follows.
  pc::PyDebugOffsets313 moved = runtime;
  moved.thread_state.current_frame += 8;
  pc::PyLayout followed = compiled;
  REQUIRE(pc::apply_debug_offsets(&moved, 0x030D0000, &followed, &why));
  CHECK(followed.tstate_frame == compiled.tstate_frame + 8);
}

TEST_CASE("3.13 debug offsets that cannot be used are refused, each with its reason") {
  const char* why = nullptr;
  pc::PyLayout layout = *pc::compiled_python_layout(13);
  pc::PyDebugOffsets313 bad = debug_offsets_313();
  bad.cookie[0] = 'y';
  CHECK_FALSE(pc::apply_debug_offsets(&bad, 0x030D0000, &layout, &why));
  CHECK(std::string(why) == "_PyRuntime has no debug offsets");
  bad = debug_offsets_313();
  CHECK_FALSE(pc::apply_debug_offsets(&bad, 0x030E0000, &layout, &why));
  CHECK(std::string(why) == "its debug offsets are another version's");
  bad.free_threaded = 1;
  CHECK_FALSE(pc::apply_debug_offsets(&bad, 0x030D0000, &layout, &why));
  CHECK(std::string(why) == "a free-threaded build");
  bad = debug_offsets_313();
  bad.code_object.name = uint64_t(1) << 40;
  CHECK_FALSE(pc::apply_debug_offsets(&bad, 0x030D0000, &layout, &why));
  CHECK(std::string(why) == "its debug offsets are out of range");
}

TEST_CASE("3.13 layout from its debug offsets: tstate->current_frame, f_executable, instr_ptr") {
  pc::PyLayout layout = *pc::compiled_python_layout(13);
  const pc::PyDebugOffsets313 runtime = debug_offsets_313();
  const char* why = nullptr;
  REQUIRE(pc::apply_debug_offsets(&runtime, 0x030D0000, &layout, &why));

  static Str<Ascii312> file(&g_str_type, "train313.py", kCompactAscii), outer_name(&g_str_type, "outer", kCompactAscii),
      inner_name(&g_str_type, "inner", kCompactAscii);
  static Bytes table(&g_bytes_type, kLocations);
  static v313::PyCodeObject outer{}, inner{};
  make_code(outer, &g_code_type, outer_name.address(), file.address(), table, 5, 1);
  make_code(inner, &g_code_type, inner_name.address(), file.address(), table, 50, 1);
  static v313::_PyInterpreterFrame shim{}, f_outer{}, f_inner{};
  shim.owner = 3;  // its f_executable is None in 3.13: never read
  f_outer.f_code = &outer;
  f_outer.previous = &shim;
  f_outer.prev_instr = outer.co_code_adaptive + 2;  // first line + 2
  f_inner.f_code = &inner;
  f_inner.previous = &f_outer;
  f_inner.prev_instr = inner.co_code_adaptive + 3;  // first line + 3
  static v313::PyThreadState tstate{};
  tstate.interp = &g_interpreter;
  tstate.current_frame = &f_inner;

  const auto seen = walk(layout, &tstate);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].function == "inner");
  CHECK(seen[0].line == 53);
  CHECK_FALSE(seen[0].entry);
  CHECK(seen[1].function == "outer");
  CHECK(seen[1].line == 7);
  CHECK(seen[1].entry);
}

TEST_CASE("a frame of another interpreter, or a code object of another type, stops the walk") {
  const pc::PyLayout& layout = *pc::compiled_python_layout(13);
  static v313::PyCodeObject not_code{};
  not_code.ob_base.ob_base.ob_type = &g_str_type;
  static v313::_PyInterpreterFrame frame{};
  frame.f_code = &not_code;
  static v313::PyThreadState tstate{};
  tstate.interp = &g_interpreter;
  tstate.current_frame = &frame;
  CHECK(walk(layout, &tstate).empty());
  static uint8_t other_interpreter;
  tstate.interp = &other_interpreter;
  CHECK(walk(layout, &tstate).empty());
}
