// The device model shared by the simulated libcudart.so.13 and libcuda.so.1.
//
// Everything here lives in libdevsim.so so that both front ends see one set of devices,
// streams, allocations and one correlation-id counter, as the real runtime and driver share
// one driver underneath. The front ends translate handles and error codes; the model never
// sees a CUDA error enum (it returns devsim::Status, which the front ends map).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "devsim_trace.h"

namespace devsim {

// Model-level outcome; each front end maps it to cudaError_t / CUresult.
enum class Status : uint8_t {
  Ok,
  NotReady,
  InvalidValue,
  InvalidDevice,
  InvalidHandle,
  InvalidDevicePointer,
  InvalidConfiguration,
  InvalidDeviceFunction,
  InvalidMemcpyDirection,
  OutOfMemory,
  StreamCaptureUnsupported,
  StreamCaptureInvalidated,
  IllegalState,
  LaunchOutOfResources,  // a block needs more registers (or threads) than the kernel allows
  StreamCaptureIsolation,  // waiting on an event of another capture
  OperatingSystem,         // a host call failed (cudaGraphDebugDotPrint's file)
  GraphExecUpdateFailure,  // cudaGraphExecUpdate refused the new graph
  StreamCaptureUnjoined,   // a stream forked into a capture did not join back before its end
};

enum class MemKind : uint8_t { Pageable, Pinned, Device, Managed };

struct Allocation {
  uintptr_t base = 0;
  size_t size = 0;
  MemKind kind = MemKind::Pageable;
  int device = 0;
  bool persistent = false;  // device storage of module variables: survives cudaDeviceReset
};

struct KernelInfo;  // kernels.h
struct Stream;      // timeline.h
struct Event;       // timeline.h
struct Graph;       // graph.h
struct GraphExec;   // graph.h

int device_count();
int max_devices();

}  // namespace devsim
