// What the CUPTI client test (cupti_client.cu) collects: activity records copied out of the
// completed buffers and the API callbacks it saw, as a Kineto-style client keeps them.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cupti_client {

struct Callback {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  uint32_t correlation_id;
  std::string function;
  std::string symbol;
};

struct Collected {
  std::vector<CUpti_ActivityKernel10> kernels;
  std::vector<CUpti_ActivityMemcpy6> memcpys;
  std::vector<CUpti_ActivityMemset4> memsets;
  std::vector<CUpti_ActivityAPI> api;  // RUNTIME and DRIVER
  std::vector<CUpti_ActivitySynchronization2> syncs;
  std::vector<CUpti_ActivityExternalCorrelation> external;
  std::vector<std::string> kernel_names;  // copied while the buffer is ours
  size_t buffers = 0;
  size_t unknown_records = 0;
  bool completed_on_caller_thread = false;
  std::vector<Callback> exits;  // API exit callbacks, in order
  size_t correlation_data_mismatches = 0;
};

}  // namespace cupti_client
