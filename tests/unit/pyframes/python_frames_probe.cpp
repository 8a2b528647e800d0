// A test library Python loads with ctypes: it runs the collector's Python frame capture on the
// calling thread and hands back what an exporter would print, so a Python script can assert
// on the frames of its own known call chain. Called through ctypes.CDLL the thread has
// released the GIL; through ctypes.PyDLL it holds it.
#include <dlfcn.h>
#include <execinfo.h>
#include <time.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "collector/python_frames.h"
#include "collector/python_linetable.h"
#include "collector/python_stack_merge.h"

namespace pc = profagent::collector;

namespace {

constexpr size_t kMaxFrames = 128;

void copy_out(const std::string& text, char* out, size_t size) {
  if (size == 0) return;
  size_t n = text.size() < size - 1 ? text.size() : size - 1;
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

// The thread's CPU time: on a shared machine wall time mostly measures other processes.
double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int pyframes_supported() { return pc::python_frames_supported() ? 1 : 0; }

// One line per frame, innermost first: "file(line): function" as torch.profiler prints them,
// "<unreadable>" for a frame whose code could not be read. Returns the number of frames.
__attribute__((visibility("default"))) int pyframes_text(char* out, size_t size) {
  pc::PyFrameRef frames[kMaxFrames];
  size_t n = pc::capture_python_frames(frames, kMaxFrames);
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    pc::PySourceLocation where;
    if (!pc::symbolize_python_frame(frames[i], &where)) {
      text += "<unreadable>\n";
      continue;
    }
    text += where.file + "(" + std::to_string(where.line) + "): " + where.function + "\n";
  }
  copy_out(text, out, size);
  return static_cast<int>(n);
}

// '1' for each frame flagged kPyFrameEntry, '0' otherwise, innermost first.
__attribute__((visibility("default"))) int pyframes_entry_flags(char* out, size_t size) {
  pc::PyFrameRef frames[kMaxFrames];
  size_t n = pc::capture_python_frames(frames, kMaxFrames);
  std::string flags;
  for (size_t i = 0; i < n; ++i) flags += (frames[i].flags & pc::kPyFrameEntry) ? '1' : '0';
  copy_out(flags, out, size);
  return static_cast<int>(n);
}

// Frames captured with room for only `max`: the truncation counter must move.
__attribute__((visibility("default"))) int pyframes_capture_at_most(int max) {
  pc::PyFrameRef frames[kMaxFrames];
  return static_cast<int>(pc::capture_python_frames(frames, static_cast<size_t>(max) < kMaxFrames ? max : kMaxFrames));
}

__attribute__((visibility("default"))) unsigned long long pyframes_truncated() {
  return pc::python_frame_counters().truncated;
}

__attribute__((visibility("default"))) unsigned long long pyframes_unreadable() {
  return pc::python_frame_counters().unreadable;
}

// Frames seen from a thread the interpreter has never met: must be none.
__attribute__((visibility("default"))) int pyframes_on_native_thread() {
  int n = -1;
  std::thread([&] {
    pc::PyFrameRef frames[kMaxFrames];
    n = static_cast<int>(pc::capture_python_frames(frames, kMaxFrames));
  }).join();
  return n;
}

__attribute__((visibility("default"))) int pyframes_is_interpreter(void* address) {
  return pc::is_interpreter_frame(reinterpret_cast<uintptr_t>(address)) ? 1 : 0;
}

__attribute__((visibility("default"))) int pyframes_line_at(const unsigned char* table, size_t size,
                                                            int first_line, int byte_offset) {
  return pc::python311_line_at(table, size, first_line, byte_offset);
}

// Mean ns of one capture of up to 64 frames (ns per call, the stacks' budget unit).
__attribute__((visibility("default"))) double pyframes_bench(int iterations, int* depth) {
  pc::PyFrameRef frames[64];
  *depth = static_cast<int>(pc::capture_python_frames(frames, 64));
  double start = now_ns();
  size_t sink = 0;
  for (int i = 0; i < iterations; ++i) sink += pc::capture_python_frames(frames, 64);
  double elapsed = now_ns() - start;
  if (sink != static_cast<size_t>(*depth) * iterations) *depth = -1;  // the stack changed under us
  return elapsed / iterations;
}

// ns of one capture: the first over code objects never seen includes interning them.
__attribute__((visibility("default"))) double pyframes_bench_once(int* depth) {
  pc::PyFrameRef frames[64];
  double start = now_ns();
  *depth = static_cast<int>(pc::capture_python_frames(frames, 64));
  return now_ns() - start;
}

// The native stack (glibc's backtrace) merged with the Python frames, innermost first:
// "py file(line): function" or "native object!symbol" ("?" when unnamed). Returns the lines.
__attribute__((visibility("default"), noinline)) int pyframes_mixed_text(char* out, size_t size) {
  void* native[kMaxFrames];
  pc::PyFrameRef python[kMaxFrames];
  int native_count = backtrace(native, kMaxFrames);
  size_t python_count = pc::capture_python_frames(python, kMaxFrames);
  uintptr_t addresses[kMaxFrames];
  for (int i = 0; i < native_count; ++i) addresses[i] = reinterpret_cast<uintptr_t>(native[i]);
  pc::MixedFrame mixed[2 * kMaxFrames];
  size_t n = pc::merge_python_frames(addresses + 1, native_count - 1, python, python_count, mixed, 2 * kMaxFrames);
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    pc::PySourceLocation where;
    Dl_info info;
    if (mixed[i].is_python && pc::symbolize_python_frame(mixed[i].python, &where)) {
      text += "py " + where.file + "(" + std::to_string(where.line) + "): " + where.function + "\n";
    } else if (!mixed[i].is_python && dladdr(reinterpret_cast<void*>(mixed[i].native - 1), &info)) {
      const char* object = info.dli_fname ? std::strrchr(info.dli_fname, '/') : nullptr;
      text += std::string("native ") + (object ? object + 1 : "?") + "!" + (info.dli_sname ? info.dli_sname : "?") + "\n";
    } else {
      text += "unknown\n";
    }
  }
  copy_out(text, out, size);
  return static_cast<int>(n);
}

// Calls Python back from C: the stack then holds Python, this function, Python again.
__attribute__((visibility("default"), noinline)) int pyframes_call_back(int (*callback)()) {
  int result = callback();
  asm volatile("" ::: "memory");  // keeps this frame (no tail call), so the stack shows it
  return result;
}

}  // extern "C"
