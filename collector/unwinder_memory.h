// How libunwind reads memory it cannot trust, without a file descriptor.
//
// Where a frame has no unwind info (JIT code, hand-written assembly) libunwind guesses the next
// frame from the frame pointer and checks each such read first. Its own check writes the byte
// through a pipe it opens at initialisation (libunwind 1.6, src/x86_64/Ginit.c): two descriptors
// in the program's range (the program's first free fd moves from 3 to 5), and when the program
// has closed them and opened its own files under those numbers, libunwind reads and writes the
// program's files (and closes them to "re-open" its pipe). So:
//   1. before libunwind is initialised, its import of pipe2 is made to fail: it never holds a
//      descriptor;
//   2. its local address space then reads memory through read_memory() (unwinder_memory.cpp):
//      a page is readable when process_vm_readv on this process can read it (a syscall, no
//      descriptor), remembered per thread for the few pages libunwind reads on every unwind,
//      as libunwind remembers its own checked pages.
// Both before libunwind's first unwind: an unwind whose check failed leaves its per-thread
// frame cache on the slow path for good. Where process_vm_readv is refused (a seccomp filter)
// stacks stay off, said once: libunwind's checks would all fail.
#pragma once

#include <cstdint>
#include <string>

namespace profagent::collector {

// Pages found readable by the calling thread, kept in its ThreadBuffer (thread_buffer.h);
// cleared when the buffer goes to another thread.
struct ReadablePages {
  static constexpr int kPages = 4;
  uintptr_t page[kPages] = {};
  uint8_t next = 0;
};

// Between loading libunwind and its first call. False, with `why`, when it cannot be kept off
// descriptors with working checks; the caller must then not use it.
bool prepare_unwinder(void* libunwind_handle, std::string& why) noexcept;

}  // namespace profagent::collector
