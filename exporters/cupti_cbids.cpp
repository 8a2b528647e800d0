#include "exporters/cupti_cbids.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "collector/trace.h"

namespace profagent::exporters {
namespace {

struct CbidEntry {
  std::string_view name;
  uint32_t cbid;
};

#include "cupti_cbids.inc"  // kRuntimeCbids, kDriverCbids: sorted by name

template <std::size_t N>
uint32_t find(const CbidEntry (&table)[N], std::string_view name) noexcept {
  const auto* it = std::lower_bound(std::begin(table), std::end(table), name,
                                    [](const CbidEntry& e, std::string_view n) { return e.name < n; });
  return it != std::end(table) && it->name == name ? it->cbid : 0;
}

template <std::size_t N>
uint32_t lookup(const CbidEntry (&table)[N], std::string_view name) noexcept {
  const uint32_t exact = find(table, name);
  if (exact != 0) return exact;
  const std::string_view base = without_stream_suffix(name);
  return base.size() == name.size() ? 0 : find(table, base);
}

}  // namespace

uint32_t runtime_cbid(std::string_view function) noexcept { return lookup(kRuntimeCbids, function); }
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

}  // namespace profagent::exporters
