// The names a join gives its records, each resolved once per window: a window has millions of
// records but few distinct names, so interning (a hash and a lock) and demangling happen per
// distinct name and every record gets a pointer copy (collector/interned_name.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collector/event.h"
#include "collector/interned_name.h"
#include "collector/names.h"

namespace profagent::collector {

class JoinNames {
 public:
  // `names` by NameId and `kernel_names` by host stub: the window's snapshots (join.h).
  JoinNames(const std::vector<std::string>& names, const std::unordered_map<const void*, std::string>& kernel_names)
      : names_(names), kernel_names_(kernel_names) {}

  // The interned name of a NameId ("" for one the snapshot does not hold).
  InternedName name(NameId id) {
    if (id >= names_.size()) return InternedName();
    if (by_id_.size() <= id) by_id_.resize(names_.size(), kUnresolved);
    uint32_t& slot = by_id_[id];
    if (slot == kUnresolved) {
      slot = uint32_t(resolved_.size());
      resolved_.emplace_back(names_[id]);
    }
    return resolved_[slot];
  }

  // A launch's kernel as registered (demangled), "" when its stub was never registered.
  // A launch loop launches one kernel many times in a row: the last answer is kept at hand.
  InternedName kernel(uint64_t host_function) {
    if (last_kernel_.has_value() && last_kernel_->first == host_function) return last_kernel_->second;
    return look_up_kernel(host_function);
  }

  // A device record's (mangled) kernel name, demangled: demangling is slow and kernels are few
  // (and, as above, mostly the same one as the record before).
  InternedName demangled(InternedName mangled) {
    if (last_demangled_.has_value() && last_demangled_->first == mangled) return last_demangled_->second;
    return look_up_demangled(mangled);
  }

 private:
  // Out of line: the calls above inline their usual case only.
  [[gnu::noinline]] InternedName look_up_kernel(uint64_t host_function) {
    auto [it, inserted] = kernels_.try_emplace(host_function);
    if (inserted) {
      auto found = kernel_names_.find(reinterpret_cast<const void*>(host_function));
      if (found != kernel_names_.end()) it->second = demangle(found->second);
    }
    last_kernel_.emplace(host_function, it->second);
    return it->second;
  }

  [[gnu::noinline]] InternedName look_up_demangled(InternedName mangled) {
    auto [it, inserted] = demangled_.try_emplace(mangled);
    if (inserted) it->second = demangle(mangled.str());
    last_demangled_.emplace(mangled, it->second);
    return it->second;
  }

  static constexpr uint32_t kUnresolved = UINT32_MAX;
  const std::vector<std::string>& names_;
  const std::unordered_map<const void*, std::string>& kernel_names_;
  std::vector<uint32_t> by_id_;          // NameId -> index into resolved_
  std::vector<InternedName> resolved_;
  std::unordered_map<uint64_t, InternedName> kernels_;  // by host stub
  std::unordered_map<InternedName, InternedName> demangled_;  // by mangled name
  std::optional<std::pair<uint64_t, InternedName>> last_kernel_;
  std::optional<std::pair<InternedName, InternedName>> last_demangled_;
};

}  // namespace profagent::collector
