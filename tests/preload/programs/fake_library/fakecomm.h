/* A fake communication library, shaped like NCCL (C API, an error enum, no symbol versions),
 * for the test of the library descriptor mechanism (hooks/library.h, tests/preload/
 * library_tests.cmake). */
#ifndef FAKECOMM_H
#define FAKECOMM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  fakecommSuccess = 0,
  fakecommSystemError = 2,
  fakecommInvalidArgument = 4,
} fakecommResult_t;

fakecommResult_t fakecommGetVersion(int* version);
/* out[i] = in[i] * ranks, as an all-reduce over `ranks` equal contributions would give. */
fakecommResult_t fakecommAllReduce(const float* in, float* out, size_t count, int ranks);
/* A function of a newer release: libprofagent_test_fakecomm.so.1 does not define it. */
fakecommResult_t fakecommMissing(int value);

#ifdef __cplusplus
}
#endif

#endif
