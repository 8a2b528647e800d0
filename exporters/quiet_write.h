// write(2) for the agent's own output, which must never raise a signal in the program:
//
// - SIGPIPE: stderr may be a pipe whose reader is gone (`prog 2>&1 >/dev/null | true`, a dead
//   log collector). Its default action ends the process (status 141).
// - SIGXFSZ: a file may reach the size limit (`ulimit -f`, RLIMIT_FSIZE) while the agent
//   writes a trace or a line into a redirected stderr. Its default action ends the process
//   with a core dump (status 153), and a handler of the program's own would be called for a
//   write that is not the program's.
//
// Both are sent by the kernel to the writing thread alone. They are blocked in this thread
// for the write; one that the write itself raised (it failed with EPIPE or EFBIG, and none
// was pending before) is taken back with a zero-timeout sigtimedwait; the mask is restored.
// The program's own disposition of either signal is never touched, and a signal of the
// program that was pending before is left for it. The failed write is an error like any
// other (the caller reports it; EFBIG reads "File too large").
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace profagent::exporters {

// One write(2) of at most `size` bytes, as above: its result, errno as the write left it.
ssize_t write_without_signals(int fd, const void* data, std::size_t size) noexcept;

}  // namespace profagent::exporters
