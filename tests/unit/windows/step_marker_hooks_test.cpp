// Step markers through the hook template (hooks/hook.h intercept_hook) with fake "real"
// functions: api:NAME fires for the symbol and its _ptsz variant only, kernel:REGEX for the
// launches of matching kernels only (also on the cached path), each AFTER the real call
// returned, and nothing fires for the agent's own calls.
#include <catch2/catch.hpp>

#include "collector/step_markers.h"
#include "hooks/hook.h"

namespace {

using profagent::EventKind;
using profagent::hooks::Payload;
using profagent::hooks::Site;

int g_real_calls = 0;
int g_steps = 0;
int g_real_calls_at_last_step = -1;

cudaError_t fake_sync() { return ++g_real_calls, cudaSuccess; }
cudaError_t fake_launch(const void*) { return ++g_real_calls, cudaSuccess; }

Site site_sync{"cudaDeviceSynchronize"};
Site site_sync_ptsz{"cudaStreamSynchronize_ptsz"};
Site site_other{"cudaEventRecord"};
Site site_launch{"cudaLaunchKernel"};

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

TEST_CASE("a kernel regex that does not compile is refused with the pattern named") {
  profagent::collector::StepMarkerSpec spec;
  spec.kernels = {"(unclosed"};
  std::string error;
  CHECK_FALSE(profagent::collector::configure_step_markers(spec, on_step, nullptr, &error));
  CHECK(error.find("(unclosed") != std::string::npos);
}
