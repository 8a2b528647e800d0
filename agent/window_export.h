// The one routine that writes a window and says so on stderr, for the step windows
// (agent/windows.cpp) and the exit window (agent/lifecycle.cpp): the agent's own drops are
// counted into the trace, the drops said (agent/drop_report.h), every output the exporter
// registry wants written (exporters/export_entries.h), its errors said, and the closing
// "wrote ..." line printed. Only what is said differs between the two, and it is data here.
#pragma once

#include <string>

#include "agent/config.h"
#include "collector/trace.h"

namespace profagent::agent {

struct WindowVoice {
  std::string drops_prefix;    // the window's name and ": " before its drop lines, or ""
  std::string closing_prefix;  // the same before the closing line: step windows say which
                               // window they wrote, the exit window's line is the process's last
  bool table = false;          // the table to stderr too (the exit window)
  std::string output_dir;      // "" for PROFAGENT_OUTPUT_DIR (a trigger may name another)
};

// Never throws: a failed export is said in the closing line. Then the next window may be
// streamed (collector/segment_stream.h streamed_window_exported).
void export_and_report(Trace& trace, const Config& config, const WindowVoice& voice) noexcept;

}  // namespace profagent::agent
