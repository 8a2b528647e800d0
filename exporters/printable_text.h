// Text for a terminal or a text file (tables, summaries, agent and report lines) never carries
// a control character. A trace's names come from programs and files: an ESC or BEL in a kernel
// name would otherwise reach the user's terminal and be obeyed (colours, cursor moves, a title
// change, a bell), and a CR or newline would forge a line. Machine formats (JSON, CSV) keep the
// exact bytes under their own quoting instead.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace profagent::exporters {

// Appends `text` with C0 controls and DEL as \n, \t, \r or \xNN, C1 controls (U+0080-U+009F,
// which some terminals obey as ESC sequences) as \u0080-\u009f, and each byte that does not
// belong to a valid UTF-8 sequence as \xNN. Every other character, UTF-8 included, is kept.
void append_printable(std::string& out, std::string_view text);
std::string printable(std::string_view text);

// The longest prefix of `text` of at most `bytes` bytes that ends on a UTF-8 character boundary
// (cutting a name never leaves half a character).
std::string_view utf8_prefix(std::string_view text, std::size_t bytes);

}  // namespace profagent::exporters
