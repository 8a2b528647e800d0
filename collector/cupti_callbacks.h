// CUPTI's callback API as a second way in (besides the hooks): the runtime and driver API
// calls no hook can interpose — a program that uses the driver API alone (Triton, CuPy,
// Numba: cuModuleLoadData + cuLaunchKernel), or one linked with the static runtime
// (`nvcc -cudart static`, whose calls never pass through a dynamic symbol) — are recorded as
// ordinary host events from CUPTI's enter/exit callbacks, on the calling thread, into the
// same per-thread buffers. So they go through everything hooked calls go through: windows,
// step markers (api:NAME), the join (their CUPTI correlation id links their device records)
// and the tables.
//
// A call is recorded once. A hook marks its thread while it is inside its real call
// (RuntimeGuard, HookForwarding), and the callback then records nothing; a call made inside a
// call the callback records (the static runtime reaching the driver) is part of that call.
// The callback runs on every API call of the program: when nothing is recorded and no step
// marker is armed it is two loads and a return; recording, it is about what a hook costs.
#pragma once

#include "collector/cupti_api.h"

namespace profagent::collector {

// Subscribes to CUPTI's runtime and driver API domains (both enabled). False with *why set
// when CUPTI refuses (only one subscriber may exist per process: another tool has it) or lacks
// the callback API; nothing is left subscribed then. Callers hold no collector lock.
bool subscribe_api_callbacks(const CuptiApi& api, CUpti_SubscriberHandle* subscriber, std::string* why) noexcept;

// Switches both domains: off while nothing is recorded and no step marker needs the calls, so
// an idle program pays CUPTI nothing per call. False if CUPTI refused.
bool enable_api_callbacks(const CuptiApi& api, CUpti_SubscriberHandle subscriber, bool enable) noexcept;

// The callback itself (exposed for unit tests, which drive it with synthetic callback data).
// `userdata` is the CuptiApi subscribed with (resource callbacks need it; API ones do not).
void CUPTIAPI on_api_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                              const void* data);

// The graph resource callbacks (collector/cupti_graph_callbacks.cpp): enabled once after
// subscribing, and left on. False when this CUPTI lacks them or refused (then graph replays keep
// their launch's External id, as the caller says once).
bool enable_graph_callbacks(const CuptiApi& api, CUpti_SubscriberHandle subscriber) noexcept;
void on_graph_resource(const CuptiApi& api, CUpti_CallbackId cbid, const void* data) noexcept;

}  // namespace profagent::collector
