// Regular expressions of the kernel:/range: step markers (collector/step_markers.h), matched
// by RE2 through libprofagent_re2.so (collector/regex/re2_shim.h): time linear in the name,
// no recursion on it, so no name or pattern can hang or overflow the launching thread
// (std::regex did both: a 20,000-character name overflowed the stack, (\w+\s?)+$ on a
// 1,000-character name backtracked for ever). Each name is decided once; VerdictCache keeps
// the answer so later launches cost a lookup.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collector/regex/re2_shim.h"

namespace profagent::collector {

// A name is matched on its first kMatchedNameBytes bytes: beyond them a pattern sees the end
// of the text (so `$` matches there). Generous for real kernels (CUTLASS-style template
// names run to a few KiB demangled); 64 KiB hostile names cost no more than 16 KiB.
inline constexpr size_t kMatchedNameBytes = 16 * 1024;

// At most `limit` bytes of `text` for a log line: printable ASCII kept, other bytes as '?',
// and "... (N bytes)" when cut, so a pattern can neither flood nor break the line.
std::string excerpt(std::string_view text, size_t limit = 48);

// Patterns that any name is searched for (RE2 syntax, unanchored).
class NamePatterns {
 public:
  // Compiles `patterns` with RE2 loaded from `library` (empty: libprofagent_re2.so next to
  // the code of this collector). Patterns that do not compile are left out and counted in
  // `rejected`, the first described in `first_problem`. False when RE2 cannot be loaded (the
  // reason in `first_problem`): then nothing matches.
  bool compile(const std::vector<std::string>& patterns, const std::string& library,
               size_t& rejected, std::string& first_problem);
  bool empty() const noexcept { return compiled_.empty(); }
  bool search(std::string_view text) const noexcept;  // any pattern, first kMatchedNameBytes

 private:
  profagent_re2_search_fn search_ = nullptr;
  std::vector<const void*> compiled_;  // leaked with the markers: matched until exit
};

// Verdicts per non-zero key (a kernel handle, an interned name id). Lock-free open addressing
// on the launch path; keys beyond the table go to a map under a leaf mutex (never held across
// a CUDA, CUPTI or loader call).
class VerdictCache {
 public:
  enum class Verdict : uint8_t { Unknown = 0, No = 1, Yes = 2 };
  Verdict find(uintptr_t key) noexcept;
  void remember(uintptr_t key, bool yes) noexcept;

 private:
  static constexpr size_t kSlots = 4096;
  static constexpr size_t kProbes = 16;
  struct Slot {
    std::atomic<uintptr_t> key{0};
    std::atomic<uint8_t> verdict{0};
  };
  static size_t home(uintptr_t key) noexcept;
  Slot slots_[kSlots];
  std::atomic<bool> overflowed_{false};
  std::mutex overflow_mutex_;
  std::unordered_map<uintptr_t, bool> overflow_;
};

}  // namespace profagent::collector
