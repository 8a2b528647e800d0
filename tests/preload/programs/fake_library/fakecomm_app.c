/* Calls the fake library (fakecomm.h) and prints what each call returned. No CUDA at all: under
 * the agent, the first fakecomm call is what starts the CUDA device backend (its descriptor
 * says the library drives CUDA). fakecommMissing is a weak reference: without the agent nothing
 * defines it; with it, it binds to the agent's hook, which finds no real function. */
#include <stdio.h>

#include "fakecomm.h"

#pragma weak fakecommMissing

int main(void) {
  int version = 0;
  const int got = (int)fakecommGetVersion(&version);
  printf("fakecommGetVersion: %d version %d\n", got, version);
  printf("fakecommGetVersion(NULL): %d\n", (int)fakecommGetVersion(NULL));
  float in[4] = {1, 2, 3, 4}, out[4] = {0};
  const int reduced = (int)fakecommAllReduce(in, out, 4, 3);
  printf("fakecommAllReduce: %d out %g %g %g %g\n", reduced, out[0], out[1], out[2], out[3]);
  for (int i = 0; i < 2; ++i) {
    if (fakecommMissing != NULL) printf("fakecommMissing: %d\n", (int)fakecommMissing(i));
    else printf("fakecommMissing: not defined\n");
  }
  return 0;
}
