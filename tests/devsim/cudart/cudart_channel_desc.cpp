// cudaCreateChannelDesc: the format descriptor of arrays and textures. Pure arithmetic, so it
// is modelled even though the arrays and textures it describes are not.
#include "cudart_common.h"

using namespace devsim;

extern "C" cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
  cudaCreateChannelDesc_v3020_params params{x, y, z, w, f};
  ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaCreateChannelDesc_v3020,
                 "cudaCreateChannelDesc", HostCost::Light, nullptr, &params);
  return cudaChannelFormatDesc{x, y, z, w, f};
}
