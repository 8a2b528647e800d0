// The output directory, reached one component at a time.
//
// The whole path is resolved here, not by the kernel: each component is opened relative to the
// descriptor of the one before it (O_NOFOLLOW), missing ones are created there (mkdirat, mode
// 0755), and a symbolic link on the way is read and followed by hand — only when the user
// running (the effective uid) or root owns it. A link another user owns could point anywhere
// that user chose: running as root, files would land in that user's directory, or in a system
// one; so it is refused, as the final component is refused when it is a link at all. Because
// each step holds the directory it came from, nothing can be swapped in between two checks.
#pragma once

#include <string>

namespace profagent::exporters {

// An open descriptor (O_DIRECTORY, close-on-exec) of `path`, created as needed; -1 with one line
// in *error otherwise.
int open_output_directory(const std::string& path, std::string* error);

}  // namespace profagent::exporters
