/* libprofagent_test_fakecomm.so.1: the fake library's implementation (fakecomm.h). */
#include "fakecomm.h"

fakecommResult_t fakecommGetVersion(int* version) {
  if (version == NULL) return fakecommInvalidArgument;
  *version = 10203;
  return fakecommSuccess;
}

fakecommResult_t fakecommAllReduce(const float* in, float* out, size_t count, int ranks) {
  if (in == NULL || out == NULL || ranks <= 0) return fakecommInvalidArgument;
  for (size_t i = 0; i < count; ++i) out[i] = in[i] * (float)ranks;
  return fakecommSuccess;
}
