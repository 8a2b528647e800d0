/* diopi_sim/sim_tensor.h — PRIVATE to tests/vendorsim: the layout of the simulated framework's
 * tensor and context. Real vendors only see opaque handles and go through the runtime
 * functions; the vendor simulator reads this layout directly only when the framework was
 * built without the runtime functions (the "no runtime" variant the agent must survive). */
#ifndef DIOPI_SIM_SIM_TENSOR_H_
#define DIOPI_SIM_SIM_TENSOR_H_

#include "diopi_sim/diopirt.h"

struct diopiTensor {
  int64_t ndim;
  int64_t shape[DIOPI_MAX_DIMS];
  int64_t stride[DIOPI_MAX_DIMS];
  diopiDtype_t dtype;
  void* data; /* device memory from cudaMalloc */
  int64_t numel;
};

struct diopiContext {
  void* stream; /* cudaStream_t */
};

#endif /* DIOPI_SIM_SIM_TENSOR_H_ */
