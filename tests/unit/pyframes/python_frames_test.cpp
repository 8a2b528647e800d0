// Python frame capture pieces that need no interpreter: the 3.11 location-table decoder, the
// str reader on objects laid out as 3.11 lays them out, and a process without Python.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "collector/log.h"
#include "collector/python_code_table.h"
#include "collector/python_frames.h"
#include "collector/python_layout.h"
#include "collector/python_linetable.h"
#include "collector/python_stack_merge.h"

namespace pc = profagent::collector;

namespace {

uint8_t entry(int form, int code_units) { return static_cast<uint8_t>(0x80 | (form << 3) | (code_units - 1)); }

int line_at(const std::vector<uint8_t>& table, int first_line, int byte_offset) {
  return pc::python311_line_at(table.data(), table.size(), first_line, byte_offset);
}

// A str object as CPython 3.11 lays it out: header, then (compact) the text itself.
struct FakeStr {
  alignas(8) uint8_t bytes[256] = {};
  FakeStr(uintptr_t type, uint32_t state, int64_t length, const void* text, size_t text_bytes, size_t data_at) {
    std::memcpy(bytes + PY311_OBJECT_TYPE, &type, sizeof type);
    std::memcpy(bytes + PY311_STR_LENGTH, &length, sizeof length);
    std::memcpy(bytes + PY311_STR_STATE, &state, sizeof state);
    std::memcpy(bytes + data_at, text, text_bytes);
  }
  uintptr_t address() const { return reinterpret_cast<uintptr_t>(bytes); }
};

constexpr uint32_t kReadyCompact = PY311_STR_READY_BIT | PY311_STR_COMPACT_BIT;
uint32_t kind(unsigned k) { return k << PY311_STR_KIND_SHIFT; }

}  // namespace

TEST_CASE("each 3.11 location form moves the line as CPython's decoder does") {
  std::vector<uint8_t> table = {
      entry(0, 1), 5,                 // short form: bytes 0-1 on the first line (10)
      entry(11, 2), 4, 9,             // one-line form +1: bytes 2-5 on 11
      entry(13, 1), 0x07,             // no columns, delta -3: bytes 6-7 on 8
      entry(14, 3), 72, 3, 0, 1, 1,   // long form, delta +100 (varint 200 = 8|64, 3): bytes 8-13 on 108
      entry(15, 1),                   // no location: bytes 14-15 have no line
      entry(12, 1), 1, 2,             // one-line form +2: bytes 16-17 on 110 (108 + 2, the gap kept no line)
  };
  CHECK(line_at(table, 10, 0) == 10);
  CHECK(line_at(table, 10, 1) == 10);
  CHECK(line_at(table, 10, 2) == 11);
  CHECK(line_at(table, 10, 4) == 11);
  CHECK(line_at(table, 10, 6) == 8);
  CHECK(line_at(table, 10, 8) == 108);
  CHECK(line_at(table, 10, 12) == 108);
  CHECK(line_at(table, 10, 14) == -1);
  CHECK(line_at(table, 10, 16) == 110);
  CHECK(line_at(table, 10, 18) == -1);  // past the table
  CHECK(line_at(table, 10, -2) == 10);  // before the first instruction: the first line
}

TEST_CASE("a location table cut inside a varint is never read past its end") {
  std::vector<uint8_t> whole = {entry(13, 1), 0x40 | 2, 1};  // delta varint continues into a second byte
  std::vector<uint8_t> cut(whole.begin(), whole.begin() + 2);
  CHECK(line_at(whole, 1, 0) == 1 + (((1 << 6) | 2) >> 1));
  CHECK(line_at(cut, 1, 0) == 2);  // only the first chunk (2 → +1) is there
  CHECK(line_at({}, 7, 0) == -1);
}

TEST_CASE("str objects in 3.11's three layouts read back as UTF-8") {
  uint8_t fake_type = 0;
  pc::PyTypeAddresses types;
  types.str = reinterpret_cast<uintptr_t>(&fake_type);
  std::string out;

  FakeStr ascii(types.str, kReadyCompact | PY311_STR_ASCII_BIT | kind(1), 7, "conv.py", 7, PY311_STR_ASCII_DATA);
  REQUIRE(pc::read_python311_str(ascii.address(), types, &out));
  CHECK(out == "conv.py");

  const uint16_t ucs2[] = {0x65, 0xE9, 0x2192};  // e é →
  FakeStr two(types.str, kReadyCompact | kind(2), 3, ucs2, sizeof ucs2, PY311_STR_COMPACT_DATA);
  REQUIRE(pc::read_python311_str(two.address(), types, &out));
  CHECK(out == "e\xC3\xA9\xE2\x86\x92");

  const uint32_t ucs4[] = {0x1F525, 0x41};  // fire, A
  uintptr_t legacy_data = reinterpret_cast<uintptr_t>(ucs4);
  FakeStr legacy(types.str, PY311_STR_READY_BIT | kind(4), 2, &legacy_data, sizeof legacy_data, PY311_STR_LEGACY_DATA);
  REQUIRE(pc::read_python311_str(legacy.address(), types, &out));
  CHECK(out == "\xF0\x9F\x94\xA5" "A");
}

TEST_CASE("objects that are not ready str objects are refused") {
  uint8_t fake_type = 0, other_type = 0;
  pc::PyTypeAddresses types;
  types.str = reinterpret_cast<uintptr_t>(&fake_type);
  std::string out;
  FakeStr wrong_type(reinterpret_cast<uintptr_t>(&other_type), kReadyCompact | PY311_STR_ASCII_BIT | kind(1), 1, "x", 1,
                     PY311_STR_ASCII_DATA);
  FakeStr not_ready(types.str, PY311_STR_COMPACT_BIT | PY311_STR_ASCII_BIT | kind(1), 1, "x", 1, PY311_STR_ASCII_DATA);
  FakeStr bad_kind(types.str, kReadyCompact | kind(3), 1, "x", 1, PY311_STR_COMPACT_DATA);
  CHECK_FALSE(pc::read_python311_str(wrong_type.address(), types, &out));
  CHECK_FALSE(pc::read_python311_str(not_ready.address(), types, &out));
  CHECK_FALSE(pc::read_python311_str(bad_kind.address(), types, &out));
  CHECK_FALSE(pc::read_python311_str(0, types, &out));
}

namespace {
int g_messages = 0;
void count_messages(pc::LogLevel, std::string_view) noexcept { ++g_messages; }
}  // namespace

TEST_CASE("a process without Python gets no frames and no message") {
  pc::set_log_sink(count_messages);
  pc::set_log_level(pc::LogLevel::Trace);  // no message of any level
  pc::PyFrameRef frames[8];
  CHECK_FALSE(pc::python_frames_supported());
  CHECK(pc::capture_python_frames(frames, 8) == 0);
  CHECK_FALSE(pc::is_interpreter_frame(reinterpret_cast<uintptr_t>(&count_messages)));
  CHECK(pc::python_frame_counters().during_probe == 0);
  pc::set_log_sink(nullptr);
  pc::set_log_level(pc::LogLevel::Warn);
  CHECK(g_messages == 0);
}

namespace {
// Synthetic addresses: 0x1xx eval loop, 0x2xx other interpreter code, anything else not Python.
pc::NativeFrameKind by_range(uintptr_t address) {
  if (address >= 0x100 && address < 0x200) return pc::NativeFrameKind::EvalLoop;
  if (address >= 0x200 && address < 0x300) return pc::NativeFrameKind::Interpreter;
  return pc::NativeFrameKind::Other;
}

std::string describe(const pc::MixedFrame* frames, size_t n) {
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    text += frames[i].is_python ? "py" + std::to_string(frames[i].python.code) : "n" + std::to_string(frames[i].native);
    text += i + 1 < n ? " " : "";
  }
  return text;
}
}  // namespace

TEST_CASE("each eval-loop frame gives way to the Python frames it ran, up to its entry frame") {
  // cudaX ← ffi ← eval[py1 py2(entry)] ← callback glue 0x250 ← ext 7 ← eval[py3 py4(entry)] ← main 0x260
  const uintptr_t native[] = {5, 6, 0x110, 0x250, 7, 0x120, 0x260};
  const pc::PyFrameRef python[] = {{1, 0, 0}, {2, 0, pc::kPyFrameEntry}, {3, 0, 0}, {4, 0, pc::kPyFrameEntry}};
  pc::MixedFrame out[16];
  size_t n = pc::merge_python_frames(native, 7, python, 4, out, 16, by_range);
  CHECK(describe(out, n) == "n5 n6 py1 py2 n7 py3 py4");
}

TEST_CASE("Python frames the native walk did not reach follow at the end, no Python keeps native frames") {
  const uintptr_t native[] = {5, 0x110, 0x260};
  const pc::PyFrameRef python[] = {{1, 0, pc::kPyFrameEntry}, {2, 0, 0}, {3, 0, pc::kPyFrameEntry}};
  pc::MixedFrame out[16];
  CHECK(describe(out, pc::merge_python_frames(native, 3, python, 3, out, 16, by_range)) == "n5 py1 py2 py3");
  CHECK(describe(out, pc::merge_python_frames(native, 3, python, 0, out, 16, by_range)) == "n5 n272 n608");
  CHECK(describe(out, pc::merge_python_frames(native, 3, python, 3, out, 2, by_range)) == "n5 py1");
}
