// A framework-style library importing the operator: loaded and unloaded over and over, each
// load a new object whose GOT the agent scans before dlopen returns.
extern "C" int diopiFill(void*, void*, const void*);

extern "C" __attribute__((visibility("default"))) long race_fill(long times) {
  long failed = 0;
  for (long i = 0; i < times; ++i) failed += diopiFill(nullptr, nullptr, nullptr) != 0;
  return times - failed;
}
