// What the exporters derive from a runtime or driver call's name (the API it implements, its
// CUPTI callback id, whether it is a driver function), computed once per distinct name: a
// window has millions of calls but few names, and finding a name's callback id is a search
// through hundreds of entries. Records name their calls with InternedName, whose dense id()
// indexes the cache.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "collector/interned_name.h"

namespace profagent::exporters {

struct CallName {
  InternedName api;           // api_name(): the public API the entry point implements
  uint32_t runtime_cbid = 0;  // runtime_cbid() of the name
  uint32_t driver_cbid = 0;   // driver_cbid() of the name
  bool driver_function = false;  // cu*, not cuda*: a driver API function
  bool entry_point = false;   // the name is an entry point other than the API (api != name)
};

// Not thread-safe: one per writer (each output is written by one thread).
class CallNames {
 public:
  // The reference stays valid until of() is next asked about a name never seen before.
  const CallName& of(InternedName name) {
    const uint32_t id = name.id();
    if (id >= known_.size()) {
      known_.resize(id + 1, false);
      by_id_.resize(id + 1);
    }
    if (!known_[id]) {
      by_id_[id] = describe(name);
      known_[id] = true;
    }
    return by_id_[id];
  }

 private:
  static CallName describe(InternedName name);
  std::vector<CallName> by_id_;
  std::vector<bool> known_;
};

}  // namespace profagent::exporters
