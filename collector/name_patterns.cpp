#include "collector/name_patterns.h"

#include <dlfcn.h>

#include <cstdio>

#include "collector/api.h"
#include "collector/helper_libraries.h"
#include "collector/log.h"

namespace profagent::collector {
namespace {

// RTLD_LOCAL: RE2's symbols never join the program's global scope (re2_shim.h). Leaked.
void* open_re2(const std::string& library, std::string& why) {
  const std::vector<std::string> candidates = library.empty() ? helper_library_paths("libprofagent_re2.so")
                                                              : std::vector<std::string>{library};
  for (const std::string& path : candidates) {
    if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  }
  const char* error = dlerror();
  why = "RE2 could not be loaded (" + excerpt(error != nullptr ? error : candidates.front(), 160) + ")";
  return nullptr;
}

}  // namespace

std::string excerpt(std::string_view text, size_t limit) {
  std::string out;
  for (char c : text.substr(0, limit)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > limit) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

bool NamePatterns::compile(const std::vector<std::string>& patterns, const std::string& library,
                           size_t& rejected, std::string& first_problem) {
  rejected = 0;
  if (patterns.empty()) return true;
  void* handle = open_re2(library, first_problem);
  auto compile = handle ? reinterpret_cast<profagent_re2_compile_fn>(dlsym(handle, kProfagentRe2Compile)) : nullptr;
  search_ = handle ? reinterpret_cast<profagent_re2_search_fn>(dlsym(handle, kProfagentRe2Search)) : nullptr;
  if (compile == nullptr || search_ == nullptr) {
    if (first_problem.empty()) first_problem = "RE2 could not be loaded (libprofagent_re2.so is incomplete)";
    rejected = patterns.size();
    return false;
  }
  for (const std::string& pattern : patterns) {
    char error[256];
    if (const void* compiled = compile(pattern.data(), pattern.size(), error, sizeof error)) {
      compiled_.push_back(compiled);
    } else if (rejected++ == 0) {
      first_problem = "'" + excerpt(pattern) + "' (" + excerpt(error, 80) + ")";
    }
  }
  return true;
}

bool NamePatterns::search(std::string_view text) const noexcept {
  if (text.size() > kMatchedNameBytes) text = text.substr(0, kMatchedNameBytes);
  for (const void* pattern : compiled_) {
    const int found = search_(pattern, text.data(), text.size());
    if (found > 0) return true;
    if (found < 0) {
      static std::atomic<bool> said{false};
      if (!said.exchange(true, std::memory_order_relaxed)) {
        log(LogLevel::Warn, "a step-marker pattern search failed (out of memory): taken as no match (said once)");
      }
    }
  }
  return false;
}

size_t VerdictCache::home(uintptr_t key) noexcept {
  // Pointers lose their alignment bits, small ids keep theirs; 12 bits: kSlots == 4096.
  return size_t((key ^ (key >> 4)) * 0x9E3779B97F4A7C15ull >> 52);
}

VerdictCache::Verdict VerdictCache::find(uintptr_t key) noexcept {
  const size_t first = home(key);
  for (size_t probe = 0; probe < kProbes; ++probe) {
    Slot& slot = slots_[(first + probe) % kSlots];
    const uintptr_t held = slot.key.load(std::memory_order_acquire);
    if (held == key) return Verdict(slot.verdict.load(std::memory_order_acquire));
    if (held == 0) return Verdict::Unknown;
  }
  if (!overflowed_.load(std::memory_order_acquire)) return Verdict::Unknown;
  // try_lock: a busy (or, in a forked child, orphaned) lock means deciding again, never waiting.
  std::unique_lock lock(overflow_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return Verdict::Unknown;
  const auto it = overflow_.find(key);
  return it == overflow_.end() ? Verdict::Unknown : it->second ? Verdict::Yes : Verdict::No;
}

void VerdictCache::remember(uintptr_t key, bool yes) noexcept {
  const auto verdict = uint8_t(yes ? Verdict::Yes : Verdict::No);
  const size_t first = home(key);
  for (size_t probe = 0; probe < kProbes; ++probe) {
    Slot& slot = slots_[(first + probe) % kSlots];
    uintptr_t held = 0;
    // A slot is claimed for a key once and keeps it; its verdict follows (a reader that sees
    // the key before the verdict decides for itself: same answer).
    if (slot.key.compare_exchange_strong(held, key, std::memory_order_acq_rel) || held == key) {
      slot.verdict.store(verdict, std::memory_order_release);
      return;
    }
  }
  try {
    std::unique_lock lock(overflow_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return;  // not remembered: decided again next time
    overflow_[key] = yes;
    overflowed_.store(true, std::memory_order_release);
  } catch (...) {
    static SwallowedSite site{"a name's match against a step-marker pattern was not remembered: it is "
                              "decided again at its next use"};
    note_swallowed(site);
  }
}

}  // namespace profagent::collector
