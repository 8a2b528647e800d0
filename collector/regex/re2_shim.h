// The C interface of libprofagent_re2.so, the one place RE2 is used (kernel:/range: step
// markers, collector/name_patterns.h). A C interface over dlopen, not a link-time
// dependency of libprofagent.so, because:
//  - Debian's libre2.a is not position-independent (its thread-local `re2::hooks::context`
//    uses the local-exec TLS model), so it cannot be linked into a shared object;
//  - linking libre2.so.9 into libprofagent.so would put RE2's C++ symbols into the global
//    scope of every profiled process, where a program's own (other) RE2 copy, loaded later,
//    could bind to them. Loaded RTLD_LOCAL, and only when a regex marker is configured, RE2
//    is invisible to the program.
#pragma once

#include <cstddef>

extern "C" {

// A compiled pattern (RE2 syntax, https://github.com/google/re2/wiki/Syntax), or nullptr
// with a short reason in `error` (always NUL-terminated, never longer than error_size).
using profagent_re2_compile_fn = void* (*)(const char* pattern, size_t length, char* error,
                                           size_t error_size);
// 1 when `pattern` matches anywhere in text[0, length) (an unanchored search), else 0; -1 if
// the search failed (RE2 ran out of memory).
using profagent_re2_search_fn = int (*)(const void* pattern, const char* text, size_t length);

}  // extern "C"

inline constexpr const char* kProfagentRe2Compile = "profagent_re2_compile";
inline constexpr const char* kProfagentRe2Search = "profagent_re2_search";
