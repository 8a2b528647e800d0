// CPython's line tables (code.co_linetable), read without the interpreter: 3.11's location
// table (also 3.12's and 3.13's) and 3.10's PEP 626 table.
#pragma once

#include <cstddef>
#include <cstdint>

namespace profagent::collector {

// The source line of the instruction at `byte_offset` in a 3.11 code object whose location
// table is `table` and whose first line is `first_line` — what PyCode_Addr2Line answers.
// -1 when the table gives that instruction no line or does not reach it. Never reads past
// `size`.
int python311_line_at(const uint8_t* table, size_t size, int first_line, int byte_offset) noexcept;

// The same for a 3.10 code object's table (its byte offsets are twice the frame's f_lasti).
int python310_line_at(const uint8_t* table, size_t size, int first_line, int byte_offset) noexcept;

}  // namespace profagent::collector
