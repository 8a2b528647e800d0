#include "exporters/cupti_cbids.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "collector/trace.h"
#include "exporters/call_names.h"

namespace profagent::exporters {
namespace {

// The name is held in the entry, not pointed to: a table of pointers needs one relocation per
// entry (1,300 of them, 8 pages made private) in every process the agent is loaded into, at
// start-up, also in those that never write a trace. A longer name does not compile.
struct CbidEntry {
  char name[56];
  uint32_t cbid;
};

#include "cupti_cbids.inc"  // kRuntimeCbids, kDriverCbids: sorted by name

template <std::size_t N>
uint32_t find(const CbidEntry (&table)[N], std::string_view name) noexcept {
  const auto before = [](const CbidEntry& e, std::string_view n) { return std::string_view(e.name) < n; };
  const auto* it = std::lower_bound(std::begin(table), std::end(table), name, before);
  return it != std::end(table) && std::string_view(it->name) == name ? it->cbid : 0;
}

template <std::size_t N>
uint32_t lookup(const CbidEntry (&table)[N], std::string_view name) noexcept {
  const uint32_t exact = find(table, name);
  if (exact != 0) return exact;
  const std::string_view base = without_stream_suffix(name);
  return base.size() == name.size() ? 0 : find(table, base);
}

}  // namespace

// nvcc's launch entry (what `<<<>>>` compiles to in CUDA 13) is reported by NVIDIA's runtime
// under the public launch it implements: __cudaLaunchKernel as cudaLaunchKernel (211, not its
// own 505; measured with CUPTI 13.0 on an H100), its _ptsz form as cudaLaunchKernel_ptsz.
uint32_t runtime_cbid(std::string_view function) noexcept {
  if (function.starts_with("__cudaLaunchKernel")) function.remove_prefix(2);
  return lookup(kRuntimeCbids, function);
}
uint32_t driver_cbid(std::string_view function) noexcept { return lookup(kDriverCbids, function); }

std::string_view api_name(std::string_view entry) noexcept {
  static constexpr std::pair<std::string_view, std::string_view> kPublic[] = {
      {"__cudaLaunchKernel", "cudaLaunchKernel"},
      {"__cudaLaunchKernel_ptsz", "cudaLaunchKernel"},
      {"cudaLaunchKernel_ptsz", "cudaLaunchKernel"},
      {"cudaLaunchKernelExC_ptsz", "cudaLaunchKernelExC"},
      {"cudaMemcpyAsync_ptsz", "cudaMemcpyAsync"},
      {"cudaMemsetAsync_ptsz", "cudaMemsetAsync"},
      {"cuLaunchKernel_ptsz", "cuLaunchKernel"},
      {"cuLaunchKernelEx_ptsz", "cuLaunchKernelEx"},
  };
  for (const auto& [from, to] : kPublic) {
    if (entry == from) return to;
  }
  return entry;
}

bool is_driver_function(std::string_view name) noexcept {
  return name.substr(0, 2) == "cu" && name.substr(0, 4) != "cuda";
}

CallName CallNames::describe(InternedName name) {
  CallName c;
  c.api = InternedName(api_name(name));
  c.runtime_cbid = runtime_cbid(name);
  c.driver_cbid = driver_cbid(name);
  c.driver_function = is_driver_function(name);
  c.entry_point = c.api != name;
  return c;
}

const CallName& CallNames::describe_new(InternedName name) {
  const uint32_t id = name.id();
  if (id >= known_.size()) {
    known_.resize(id + 1, 0);
    by_id_.resize(id + 1);
  }
  by_id_[id] = describe(name);
  known_[id] = 1;
  return by_id_[id];
}

}  // namespace profagent::exporters
