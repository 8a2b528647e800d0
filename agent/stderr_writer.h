// The one way any agent line reaches stderr (spdlog's sink and print_line both end here), so
// that agent output can never kill, corrupt or be mistaken for the program's:
//
// - Never into another file. The identity of fd 2 (device, inode, rdev, file type) is taken
//   when the agent starts; a line is written only while fd 2 is still that file. A program
//   that closed 0-2 and opened data files in their place keeps its data byte for byte; the
//   line is dropped and counted instead (the count goes into the trace's profagent_drops).
// - Never SIGPIPE nor SIGXFSZ. stderr may be a pipe whose reader is gone (`prog 2>&1 >/dev/null
//   | true`, a dead log collector) or a file past `ulimit -f`: the signal the write raises is
//   blocked and taken back (exporters/quiet_write.h). Without this the process died at exit
//   (141, or 153).
// - One line, one prefix. Control characters in the message (a newline in a path taken from
//   PROFAGENT_OUTPUT_DIR, say) are escaped (\n, \t, \xNN), so every agent line starts with
//   "[profagent] " and the program's own stderr lines can always be told apart.
#pragma once

#include <cstdint>
#include <string_view>

namespace profagent::agent {

// Takes the identity of fd 2 (once; later calls do nothing). No fd 2 at that time: every
// line is dropped.
void remember_stderr() noexcept;

// Writes "[profagent] <message, escaped>\n" with one write(2) (a pipe keeps lines whole);
// false, and the line counted as dropped, if it could not be written.
bool write_agent_line(std::string_view message) noexcept;

// Whether fd 2 is still the stderr the agent started with.
bool stderr_is_original() noexcept;

// Agent lines that never reached stderr (replaced, closed, broken pipe, write error, or no
// memory to build the line: count_dropped_agent_line, for the logger's own failures, which
// cannot be logged).
uint64_t dropped_agent_lines() noexcept;
void count_dropped_agent_line() noexcept;

}  // namespace profagent::agent
