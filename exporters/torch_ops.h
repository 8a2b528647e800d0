// torch operators recorded from torch's NVTX ranges (hooks/nvtx/torch_names.h): which backward
// operator was run for which forward one, as torch.profiler's Kineto trace links them.
//
// Kineto links a forward operator to the backward function with the same sequence number, the
// forward one being, among the operators of its thread with that number, the one that started
// last (torch/csrc/autograd/profiler_kineto.cpp, generateForwardBackwardLink). NVTX names do
// not carry the forward thread: a backward operator's forward one is the latest operator with
// its sequence number that started before it, on any thread.
#pragma once

#include <cstdint>
#include <vector>

#include "collector/trace.h"

namespace profagent::exporters {

struct ForwardBackward {
  std::vector<uint32_t> fwd_tid;    // per host record: a backward op's forward thread, else 0
  std::vector<uint64_t> flow;       // per host record: the fwdbwd flow it starts or ends, else 0
  std::vector<bool> flow_starts;    // per host record: true on the forward end of its flow
  uint64_t links = 0;
};

// A torch operator that autograd's engine runs for a forward one: named `...Backward<N>` or run
// by `autograd::engine::evaluate_function: <its name>`, with a sequence number.
bool is_backward_op(const Trace& t, const HostRecord& h);

ForwardBackward link_forward_backward(const Trace& t);

}  // namespace profagent::exporters
