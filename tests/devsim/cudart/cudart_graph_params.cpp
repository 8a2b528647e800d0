// Graph node prototypes from the runtime's parameter structs: each is validated as the direct
// call with the same parameters would be (a kernel node like a launch, a copy node like
// cudaMemcpyAsync), and the caller's struct is kept for the *GetParams calls.
#include "cudart_graph_common.h"
#include "kernels.h"
#include "ops.h"

namespace devsim::rt {
namespace {

Dim3 to_dim(dim3 d) { return Dim3{d.x, d.y, d.z}; }

cudaPitchedPtr linear_ptr(const void* p, size_t count) {
  cudaPitchedPtr ptr{};
  ptr.ptr = const_cast<void*>(p);
  ptr.pitch = ptr.xsize = count;
  ptr.ysize = 1;
  return ptr;
}

// The 1-D copy forms are kept as the 3-D struct cudaGraphMemcpyNodeGetParams returns for them.
cudaMemcpy3DParms linear_parms(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  cudaMemcpy3DParms p{};
  p.srcPtr = linear_ptr(src, count);
  p.dstPtr = linear_ptr(dst, count);
  p.extent = cudaExtent{count, 1, 1};
  p.kind = kind;
  return p;
}

char* symbol_storage(const void* symbol, size_t count, size_t offset, cudaError_t* err) {
  size_t size = 0;
  auto* storage = static_cast<char*>(variable_storage(symbol, &size));
  *err = !storage ? cudaErrorInvalidSymbol : offset + count > size ? cudaErrorInvalidValue : cudaSuccess;
  return storage ? storage + offset : nullptr;
}

// Every byte of an element equal: the model fills bytes (as cuMemsetD32 in the driver).
bool byte_fill(unsigned value, unsigned element_size) {
  for (unsigned i = 1; i < element_size; ++i) {
    if (((value >> (8 * i)) & 0xff) != (value & 0xff)) return false;
  }
  return true;
}

}  // namespace

// Plain dependencies only: edge data other than the default (programmatic ports) is not modelled.
bool default_edges(const cudaGraphEdgeData* edges, size_t count) {
  for (size_t i = 0; edges && i < count; ++i) {
    if (edges[i].from_port || edges[i].to_port || edges[i].type) return false;
  }
  return true;
}

bool nodes_of(const cudaGraphNode_t* handles, size_t count, std::vector<GraphNode*>* out) {
  if (count > 0 && handles == nullptr) return false;
  for (size_t i = 0; i < count; ++i) {
    GraphNode* n = node_of(handles[i]);
    if (n == nullptr) return false;
    out->push_back(n);
  }
  return true;
}

// kernelParams are kept as given (device code never runs, so the arguments are never read).
cudaError_t kernel_prototype(const cudaKernelNodeParams* p, GraphNode* out) {
  if (p == nullptr) return cudaErrorInvalidValue;
  const KernelInfo* k = find_kernel(p->func);
  if (k == nullptr) k = kernel_from_handle(p->func);
  LaunchParams l{k, to_dim(p->gridDim), to_dim(p->blockDim), p->sharedMemBytes, CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR};
  out->kind = NodeKind::Kernel;
  Status st = kernel_payload(l, &out->op);
  if (st != Status::Ok) return to_cuda(st);
  store_params(*out, *p);
  return cudaSuccess;
}

// Pitched pointers only: arrays and depth > 1 (3-D copies) are not modelled.
cudaError_t memcpy_prototype(const cudaMemcpy3DParms* p, GraphNode* out) {
  if (p == nullptr) return cudaErrorInvalidValue;
  if (p->srcArray || p->dstArray || p->extent.depth > 1) return cudaErrorNotSupported;
  const cudaPitchedPtr &s = p->srcPtr, &d = p->dstPtr;
  CopyParams c;
  c.src = static_cast<const char*>(s.ptr) + p->srcPos.y * s.pitch + p->srcPos.x;
  c.dst = static_cast<char*>(d.ptr) + p->dstPos.y * d.pitch + p->dstPos.x;
  c.width = p->extent.width;
  c.height = p->extent.height;
  c.spitch = s.pitch;
  c.dpitch = d.pitch;
  c.declared_kind = p->kind;
  c.async = true;  // a graph's copies never block the host
  out->kind = NodeKind::Memcpy;
  Status st = copy_payload(c, &out->op);
  if (st != Status::Ok) return to_cuda(st);
  store_params(*out, *p);
  return cudaSuccess;
}

cudaError_t memcpy1d_prototype(void* dst, const void* src, size_t count, cudaMemcpyKind kind, GraphNode* out) {
  cudaMemcpy3DParms p = linear_parms(dst, src, count, kind);
  return memcpy_prototype(&p, out);
}

cudaError_t to_symbol_prototype(const void* symbol, const void* src, size_t count, size_t offset,
                                cudaMemcpyKind kind, GraphNode* out) {
  cudaError_t err;
  char* dst = symbol_storage(symbol, count, offset, &err);
  return err != cudaSuccess ? err : memcpy1d_prototype(dst, src, count, kind, out);
}

cudaError_t from_symbol_prototype(void* dst, const void* symbol, size_t count, size_t offset,
                                  cudaMemcpyKind kind, GraphNode* out) {
  cudaError_t err;
  char* src = symbol_storage(symbol, count, offset, &err);
  return err != cudaSuccess ? err : memcpy1d_prototype(dst, src, count, kind, out);
}

cudaError_t memset_prototype(const cudaMemsetParams* p, GraphNode* out) {
  if (p == nullptr) return cudaErrorInvalidValue;
  unsigned es = p->elementSize;
  if (es != 1 && es != 2 && es != 4) return cudaErrorInvalidValue;
  if (!byte_fill(p->value, es)) return cudaErrorNotSupported;
  size_t width = p->width * es;
  size_t pitch = p->height > 1 ? p->pitch : width;
  out->kind = NodeKind::Memset;
  Status st = set_payload(p->dst, pitch, int(p->value & 0xff), width, p->height, true, &out->op);
  if (st != Status::Ok) return to_cuda(st);
  store_params(*out, *p);
  return cudaSuccess;
}

cudaError_t host_prototype(const cudaHostNodeParams* p, GraphNode* out) {
  if (p == nullptr || p->fn == nullptr) return cudaErrorInvalidValue;
  out->kind = NodeKind::Host;
  out->op.type = OpType::HostFunc;
  out->op.host_fn = p->fn;
  out->op.host_arg = p->userData;
  store_params(*out, *p);
  return cudaSuccess;
}

cudaError_t event_prototype(NodeKind kind, cudaEvent_t event, GraphNode* out) {
  auto* e = reinterpret_cast<Event*>(event);
  if (!event_live(e)) return cudaErrorInvalidResourceHandle;
  out->kind = kind;
  out->event = e;
  return cudaSuccess;
}

cudaError_t generic_prototype(const cudaGraphNodeParams* p, GraphNode* out) {
  switch (p->type) {
    case cudaGraphNodeTypeKernel: {
      const cudaKernelNodeParamsV2& k = p->kernel;
      cudaKernelNodeParams v1{k.func, k.gridDim, k.blockDim, k.sharedMemBytes, k.kernelParams, k.extra};
      return kernel_prototype(&v1, out);
    }
    case cudaGraphNodeTypeMemcpy: return memcpy_prototype(&p->memcpy.copyParams, out);
    case cudaGraphNodeTypeMemset: {
      const cudaMemsetParamsV2& m = p->memset;
      cudaMemsetParams v1{m.dst, m.pitch, m.value, m.elementSize, m.width, m.height};
      return memset_prototype(&v1, out);
    }
    case cudaGraphNodeTypeHost: {
      cudaHostNodeParams v1{p->host.fn, p->host.userData};
      return host_prototype(&v1, out);
    }
    case cudaGraphNodeTypeEmpty: out->kind = NodeKind::Empty; return cudaSuccess;
    case cudaGraphNodeTypeWaitEvent: return event_prototype(NodeKind::EventWait, p->eventWait.event, out);
    case cudaGraphNodeTypeEventRecord: return event_prototype(NodeKind::EventRecord, p->eventRecord.event, out);
    default: return cudaErrorNotSupported;
  }
}

}  // namespace devsim::rt
