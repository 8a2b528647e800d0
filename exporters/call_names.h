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
  // Asked twice per call record: a name already described is one indexed load, inline.
  const CallName& of(InternedName name) {
    const uint32_t id = name.id();
    if (id < known_.size() && known_[id]) return by_id_[id];
    return describe_new(name);
  }

 private:
  static CallName describe(InternedName name);
  const CallName& describe_new(InternedName name);
  std::vector<CallName> by_id_;
  std::vector<uint8_t> known_;  // by id: 1 once by_id_ holds its description
};

}  // namespace profagent::exporters
