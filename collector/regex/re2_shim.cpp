// libprofagent_re2.so: RE2 behind a C interface (collector/regex/re2_shim.h says why).
// RE2 guarantees matching in time linear in the text and bounded memory, with no recursion
// on the text: std::regex overflowed the launching thread's stack on 20,000-character names
// and backtracked exponentially on patterns such as (\w+\s?)+$ (see https://github.com/google/re2/wiki/WhyRE2).
#include "collector/regex/re2_shim.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

namespace {

void copy_error(const std::string& text, char* error, size_t error_size) noexcept {
  if (error == nullptr || error_size == 0) return;
  const size_t n = std::min(text.size(), error_size - 1);
  std::memcpy(error, text.data(), n);
  error[n] = '\0';
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void* profagent_re2_compile(
    const char* pattern, size_t length, char* error, size_t error_size) noexcept {
  try {
    RE2::Options options;
    options.set_log_errors(false);  // RE2 would write to the program's stderr
    options.set_max_mem(8 << 20);   // a huge pattern fails to compile instead of growing
    auto* compiled = new RE2(re2::StringPiece(pattern, length), options);
    if (compiled->ok()) return compiled;
    // error() quotes the offending part of the pattern: cut to error_size here, and the
    // caller shortens it again for its one log line.
    copy_error(compiled->error(), error, error_size);
    delete compiled;
  } catch (...) {
    copy_error("out of memory", error, error_size);
  }
  return nullptr;
}

extern "C" __attribute__((visibility("default"))) int profagent_re2_search(
    const void* pattern, const char* text, size_t length) noexcept {
  try {
    return RE2::PartialMatch(re2::StringPiece(text, length), *static_cast<const RE2*>(pattern)) ? 1 : 0;
  } catch (...) {
    return -1;  // this library has no logger: the caller says it (NamePatterns::search)
  }
}
