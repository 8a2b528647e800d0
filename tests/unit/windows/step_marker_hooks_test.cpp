// Step markers through the hook template (hooks/hook.h intercept_hook) with fake "real"
// functions: api:NAME fires for the symbol and its _ptsz variant only, kernel:REGEX for the
// launches of matching kernels only (also on the cached path), each AFTER the real call
// returned, and nothing fires for the agent's own calls.
#include <catch2/catch.hpp>

#include "collector/name_patterns.h"
#include "collector/step_markers.h"
#include "hooks/cudart.h"

namespace {

using profagent::EventKind;
using profagent::hooks::Payload;
using Site = profagent::hooks::CudartSite;
using profagent::hooks::kCudart13;

int g_real_calls = 0;
int g_steps = 0;
int g_real_calls_at_last_step = -1;

cudaError_t fake_sync() { return ++g_real_calls, cudaSuccess; }
cudaError_t fake_launch(const void*) { return ++g_real_calls, cudaSuccess; }

Site site_sync{"cudaDeviceSynchronize", kCudart13};
Site site_sync_ptsz{"cudaStreamSynchronize_ptsz", kCudart13};
Site site_other{"cudaEventRecord", kCudart13};
Site site_launch{"cudaLaunchKernel", kCudart13};

template <typename Fn>
cudaError_t call(Site& site, Fn* real) {
  site.real.address = reinterpret_cast<void*>(real);
  return profagent::hooks::intercept_hook<Fn>(site, []() noexcept { return Payload{}; });
}

cudaError_t launch(const void* kernel) {
  site_launch.real.address = reinterpret_cast<void*>(&fake_launch);
  return profagent::hooks::intercept_hook<decltype(fake_launch)>(
      site_launch, []() noexcept { return Payload{EventKind::Launch, 0, 0, 0}; }, kernel);
}

void on_step() noexcept {
  ++g_steps;
  g_real_calls_at_last_step = g_real_calls;
}

const char kMatching = 0;  // stand-ins for two kernels' host stubs
const char kOther = 0;

}  // namespace

TEST_CASE("step markers fire from hooks after the real call, for the configured calls only") {
  g_real_calls = 0, g_steps = 0, g_real_calls_at_last_step = -1;  // other cases count too
  profagent::collector::StepMarkerSpec spec;
  spec.apis = {"cudaDeviceSynchronize", "cudaStreamSynchronize"};
  spec.kernels = {"^my_kernel\\("};
  std::string error;
  REQUIRE(profagent::collector::configure_step_markers(spec, on_step, nullptr, &error));
  profagent::collector::note_kernel_name(&kMatching, "_Z9my_kernelPf");
  profagent::collector::note_kernel_name(&kOther, "_Z12my_kernel_v2Pf");

  call(site_sync, &fake_sync);
  CHECK(g_steps == 1);
  CHECK(g_real_calls_at_last_step == 1);  // the real call had returned
  call(site_sync_ptsz, &fake_sync);
  CHECK(g_steps == 2);
  call(site_other, &fake_sync);
  CHECK(g_steps == 2);

  launch(&kMatching);
  launch(&kOther);
  launch(&kMatching);  // the cached verdict
  launch(&kOther);
  CHECK(g_steps == 4);
  CHECK(g_real_calls == 7);

  {
    profagent::collector::AgentBusy busy;  // the agent's own CUDA calls mark nothing
    call(site_sync, &fake_sync);
  }
  CHECK(g_steps == 4);
}

TEST_CASE("patterns that do not compile are left out in one shortened line, the others work") {
  profagent::collector::StepMarkerSpec spec;
  spec.kernels = {"(unclosed", "^good_kernel"};
  spec.ranges = {std::string(100000, '(')};
  std::string problem;
  CHECK(profagent::collector::configure_step_markers(spec, on_step, nullptr, &problem));
  CHECK(problem.rfind("2 of 3 kernel:/range: patterns are not valid RE2 expressions", 0) == 0);
  CHECK(problem.find("(unclosed") != std::string::npos);
  CHECK(problem.find('\n') == std::string::npos);
  CHECK(problem.size() < 300);

  static const char kGood = 0;
  profagent::collector::note_kernel_name(&kGood, "good_kernel");
  const int before = g_steps;
  launch(&kGood);
  CHECK(g_steps == before + 1);
}

TEST_CASE("an invalid range pattern is not echoed whole") {
  profagent::collector::StepMarkerSpec spec;
  spec.ranges = {"[" + std::string(50000, 'a')};
  std::string problem;
  CHECK(profagent::collector::configure_step_markers(spec, on_step, nullptr, &problem));
  CHECK(problem.find("1 of 1 ") == 0);
  CHECK(problem.find("(50001 bytes)") != std::string::npos);
  CHECK(problem.size() < 300);
}

TEST_CASE("hostile names and patterns are decided in linear time, on a bounded name") {
  profagent::collector::StepMarkerSpec spec;
  spec.kernels = {"(a|b)*c", R"((\w+\s?)+$)"};
  std::string problem;
  REQUIRE(profagent::collector::configure_step_markers(spec, on_step, nullptr, &problem));
  CHECK(problem.empty());
  static const char kLongAb = 0, kWords = 0, kHuge = 0, kHugeEarly = 0;
  std::string ab;  // (a|b)*c on 20,000 characters: std::regex overflowed the stack
  while (ab.size() < 20000) ab += "a-";  // '-': the other pattern's $ never follows a \w
  const std::string words = std::string(1000, 'w') + "!";  // (\w+\s?)+$: exponential backtracking
  std::string huge(64 * 1024, '-');
  std::string huge_early = huge;
  huge[20000] = 'c';       // beyond the 16 KiB bound: not seen
  huge_early[100] = 'c';   // within it
  profagent::collector::note_kernel_name(&kLongAb, ab.c_str());
  profagent::collector::note_kernel_name(&kWords, words.c_str());
  profagent::collector::note_kernel_name(&kHuge, huge.c_str());
  profagent::collector::note_kernel_name(&kHugeEarly, huge_early.c_str());
  const int before = g_steps;
  launch(&kLongAb);
  CHECK(g_steps == before);
  launch(&kWords);
  CHECK(g_steps == before);
  launch(&kHuge);
  CHECK(g_steps == before);
  launch(&kHugeEarly);
  launch(&kHugeEarly);  // the cached verdict
  CHECK(g_steps == before + 2);
}

TEST_CASE("verdicts are kept for every key, also beyond the lock-free table") {
  auto* cache = new profagent::collector::VerdictCache;  // 64 KiB: not on the stack
  using Verdict = profagent::collector::VerdictCache::Verdict;
  constexpr uintptr_t kKeys = 20000;  // more than its 4096 slots
  for (uintptr_t key = 1; key <= kKeys; ++key) cache->remember(key * 16, key % 3 == 0);
  size_t wrong = 0;
  for (uintptr_t key = 1; key <= kKeys; ++key) {
    wrong += cache->find(key * 16) != (key % 3 == 0 ? Verdict::Yes : Verdict::No);
  }
  CHECK(wrong == 0);
  CHECK(cache->find(kKeys * 16 + 16) == Verdict::Unknown);
  delete cache;
}
