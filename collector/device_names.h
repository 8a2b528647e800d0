// Names of device records as Kineto writes them (libkineto's output_json.cpp), so tools written for
// PyTorch profiler traces (HTA's memcpy-kind regexes, for one) read ours unchanged.
#pragma once

#include <cstdint>
#include <string>

namespace profagent::collector {

// "Memcpy HtoD (Pinned -> Device)". Arguments are CUpti_ActivityMemcpyKind and
// CUpti_ActivityMemoryKind values.
std::string memcpy_name(uint32_t copy_kind, uint32_t src_kind, uint32_t dst_kind);

// "Memset (Device)". memory_kind is a CUpti_ActivityMemoryKind.
std::string memset_name(uint32_t memory_kind);

// "Stream Sync", "Event Sync", "Context Sync", "Stream Wait Event" (CUpti_ActivitySynchronizationType).
std::string sync_name(uint32_t sync_type);

}  // namespace profagent::collector
