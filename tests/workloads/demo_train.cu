// demo_train: a small training-like loop, the workload the README's demo profiles.
//
//   demo_train [steps=20] [--graph]
//
// Each step: the copy stream uploads a pinned host batch (images and labels) and signals the
// compute stream with an event; the compute stream runs a conv -> matmul -> ReLU -> matmul ->
// softmax cross-entropy forward pass, zeroes the gradients with a memset, runs the backward pass
// and an Adam step, and copies the loss back to the host. Matmuls go through libsimblas, which
// launches with cuLaunchKernel like cuBLAS; the rest are runtime <<<>>> launches. With --graph
// the optimizer step is captured once into a CUDA graph and replayed every step.
//
// The program times itself (host wall clock and device events per step) and prints a summary,
// so it is useful with or without the profiler. If profagent is preloaded, its public C API
// (weak symbols below) marks steps and ranges; without it those calls are skipped.
#include "demo_kernels.cuh"
#include "simblas.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
// profagent's public C API (agent/profagent.h), resolved only if libprofagent.so is loaded.
void profagent_step(void) __attribute__((weak));
void profagent_range_push(const char* name) __attribute__((weak));
void profagent_range_pop(void) __attribute__((weak));
}

namespace demo {

void check(cudaError_t status, const char* call, int line) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "demo_train.cu:%d: %s failed: %s\n", line, call, cudaGetErrorString(status));
  std::exit(EXIT_FAILURE);
}

void check(simblasStatus_t status, const char* call, int line) {
  if (status == SIMBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "demo_train.cu:%d: %s failed: %s (CUresult %d)\n", line, call,
               simblasGetStatusString(status), simblasGetLastDriverError());
  std::exit(EXIT_FAILURE);
}

#define CHECK(call) ::demo::check((call), #call, __LINE__)
#define CHECK_LAUNCH() CHECK(cudaGetLastError())

// A profiler range that costs nothing when profagent is absent.
class Range {
 public:
  explicit Range(const char* name) {
    if (profagent_range_push) profagent_range_push(name);
  }
  ~Range() {
    if (profagent_range_pop) profagent_range_pop();
  }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

// Model dimensions: 16x16 single-channel images, one conv, two dense layers, 10 classes.
constexpr int kBatch = 128, kHeight = 16, kWidth = 16, kPixels = kHeight * kWidth;
constexpr int kHidden = 1024, kClasses = 10, kConvK = 3, kConvWeights = kConvK * kConvK;
constexpr int kHostBatches = 4;  // pinned batches the loader cycles through
constexpr int kThreads = 256;
constexpr float kLearningRate = 1e-3f, kWeightDecay = 1e-4f;

unsigned blocks(int n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// One parameter tensor with its gradient and Adam moments (all device memory).
struct Param {
  int size = 0;
  float *value = nullptr, *grad = nullptr, *m = nullptr, *v = nullptr;
};

struct Model {
  Param conv, w1, w2;                             // conv filter, pixels x hidden, hidden x classes
  float *x = nullptr, *conv_out = nullptr;        // batch x pixels
  float *hidden = nullptr, *hidden_relu = nullptr, *hidden_t = nullptr;  // batch x hidden
  float *logits = nullptr, *grad_logits = nullptr, *w2_t = nullptr;
  float *grad_hidden = nullptr, *grad_hidden_relu = nullptr, *conv_out_t = nullptr;
  float *w1_t = nullptr, *grad_conv_out = nullptr;
  float *sample_loss = nullptr, *loss = nullptr;
  int *labels = nullptr, *step = nullptr;
};

struct HostBatch {
  float* images = nullptr;  // pinned
  int* labels = nullptr;    // pinned
};

struct Pipeline {
  cudaStream_t copy = nullptr, compute = nullptr;
  cudaEvent_t batch_ready = nullptr, batch_consumed = nullptr;  // no timing: sync only
  cudaEvent_t step_start = nullptr, step_end = nullptr;         // device time of a step
  HostBatch batches[kHostBatches];
  float* host_loss = nullptr;  // pinned
  cudaGraphExec_t optimizer_graph = nullptr;
};

float* device_floats(int n) {
  float* p = nullptr;
  CHECK(cudaMalloc(&p, n * sizeof(float)));
  return p;
}

// Small deterministic pseudo-random values, so runs are reproducible.
std::vector<float> pseudo_random(int n, float scale, unsigned seed) {
  std::vector<float> values(n);
  for (int i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    values[i] = scale * (static_cast<float>(seed >> 8) / 16777216.0f - 0.5f);
  }
  return values;
}

Param make_param(int size, float scale, unsigned seed) {
  Param p{size, device_floats(size), device_floats(size), device_floats(size), device_floats(size)};
  std::vector<float> init = pseudo_random(size, scale, seed);
  CHECK(cudaMemcpy(p.value, init.data(), size * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(p.m, 0, size * sizeof(float)));
  CHECK(cudaMemset(p.v, 0, size * sizeof(float)));
  return p;
}

void free_param(Param& p) {
  for (float* ptr : {p.value, p.grad, p.m, p.v}) CHECK(cudaFree(ptr));
}

Model make_model() {
  Model m;
  m.conv = make_param(kConvWeights, 0.5f, 1);
  m.w1 = make_param(kPixels * kHidden, 0.1f, 2);
  m.w2 = make_param(kHidden * kClasses, 0.1f, 3);
  for (float** p : {&m.x, &m.conv_out, &m.conv_out_t, &m.grad_conv_out}) *p = device_floats(kBatch * kPixels);
  for (float** p : {&m.hidden, &m.hidden_relu, &m.hidden_t, &m.grad_hidden, &m.grad_hidden_relu})
    *p = device_floats(kBatch * kHidden);
  for (float** p : {&m.logits, &m.grad_logits}) *p = device_floats(kBatch * kClasses);
  m.w2_t = device_floats(kHidden * kClasses);
  m.w1_t = device_floats(kPixels * kHidden);
  m.sample_loss = device_floats(kBatch);
  m.loss = device_floats(1);
  CHECK(cudaMemset(m.loss, 0, sizeof(float)));
  CHECK(cudaMalloc(&m.labels, kBatch * sizeof(int)));
  CHECK(cudaMalloc(&m.step, sizeof(int)));
  CHECK(cudaMemset(m.step, 0, sizeof(int)));
  return m;
}

void free_model(Model& m) {
  for (Param* p : {&m.conv, &m.w1, &m.w2}) free_param(*p);
  for (float* p : {m.x, m.conv_out, m.conv_out_t, m.hidden, m.hidden_relu, m.hidden_t,
                   m.grad_hidden, m.grad_hidden_relu, m.logits, m.grad_logits, m.w2_t,
                   m.w1_t, m.grad_conv_out, m.sample_loss, m.loss})
    CHECK(cudaFree(p));
  CHECK(cudaFree(m.labels));
  CHECK(cudaFree(m.step));
}

// C (m x n) = A (m x k) * B (k x n) through simblas, inside a profiler range.
void matmul(const char* name, int m, int n, int k, const float* a, const float* b, float* c,
            cudaStream_t stream) {
  Range range(name);
  CHECK(simblasSgemm(m, n, k, 1.0f, a, m, b, k, 0.0f, c, m, stream));
}

void forward(const Model& m, cudaStream_t s) {
  nn::conv2d_fwd<float, kConvK><<<blocks(kBatch * kPixels), kThreads, 0, s>>>(
      m.x, m.conv.value, m.conv_out, kBatch, kHeight, kWidth);
  CHECK_LAUNCH();
  matmul("fc1.forward", kBatch, kHidden, kPixels, m.conv_out, m.w1.value, m.hidden, s);
  relu_forward<<<blocks(kBatch * kHidden), kThreads, 0, s>>>(m.hidden, m.hidden_relu, kBatch * kHidden);
  CHECK_LAUNCH();
  matmul("fc2.forward", kBatch, kClasses, kHidden, m.hidden_relu, m.w2.value, m.logits, s);
  loss::softmax_cross_entropy<float><<<blocks(kBatch), kThreads, 0, s>>>(
      m.logits, m.labels, m.sample_loss, m.grad_logits, kBatch, kClasses);
  CHECK_LAUNCH();
  loss::mean_reduce<float, kThreads><<<1, kThreads, 0, s>>>(m.sample_loss, m.loss, kBatch);
  CHECK_LAUNCH();
}

template <typename T>
void transpose(const T* in, T* out, int rows, int cols, cudaStream_t s) {
  nn::transpose<T><<<blocks(rows * cols), kThreads, 0, s>>>(in, out, rows, cols);
  CHECK_LAUNCH();
}

void backward(const Model& m, cudaStream_t s) {
  // The conv filter's gradient is accumulated with atomics, so every gradient starts at zero.
  for (const Param* p : {&m.conv, &m.w1, &m.w2})
    CHECK(cudaMemsetAsync(p->grad, 0, p->size * sizeof(float), s));
  transpose(m.hidden_relu, m.hidden_t, kBatch, kHidden, s);
  matmul("fc2.backward_weight", kHidden, kClasses, kBatch, m.hidden_t, m.grad_logits, m.w2.grad, s);
  transpose(m.w2.value, m.w2_t, kHidden, kClasses, s);
  matmul("fc2.backward_input", kBatch, kHidden, kClasses, m.grad_logits, m.w2_t, m.grad_hidden, s);
  relu_backward<<<blocks(kBatch * kHidden), kThreads, 0, s>>>(m.hidden_relu, m.grad_hidden,
                                                              m.grad_hidden_relu, kBatch * kHidden);
  CHECK_LAUNCH();
  transpose(m.conv_out, m.conv_out_t, kBatch, kPixels, s);
  matmul("fc1.backward_weight", kPixels, kHidden, kBatch, m.conv_out_t, m.grad_hidden_relu, m.w1.grad, s);
  transpose(m.w1.value, m.w1_t, kPixels, kHidden, s);
  matmul("fc1.backward_input", kBatch, kPixels, kHidden, m.grad_hidden_relu, m.w1_t, m.grad_conv_out, s);
  nn::conv2d_bwd_weight<float, kConvK><<<blocks(kBatch * kPixels), kThreads, 0, s>>>(
      m.x, m.grad_conv_out, m.conv.grad, kBatch, kHeight, kWidth);
  CHECK_LAUNCH();
}

// Adam on every parameter; weight decay of the dense layers through simblas' saxpy.
void optimizer_step(const Model& m, cudaStream_t s) {
  optim::advance_step<<<1, 1, 0, s>>>(m.step);
  CHECK_LAUNCH();
  for (const Param* p : {&m.conv, &m.w1, &m.w2}) {
    optim::adam_step<float><<<blocks(p->size), kThreads, 0, s>>>(p->value, p->grad, p->m, p->v,
                                                                 p->size, kLearningRate, m.step);
    CHECK_LAUNCH();
  }
}

void weight_decay(const Model& m, cudaStream_t s) {
  Range range("weight_decay");
  for (const Param* p : {&m.w1, &m.w2}) CHECK(simblasSaxpy(p->size, -kWeightDecay, p->value, p->value, s));
}

// Captures the optimizer step once; each training step then replays it with one launch.
cudaGraphExec_t capture_optimizer(const Model& m, cudaStream_t s) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  optimizer_step(m, s);
  CHECK(cudaStreamEndCapture(s, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphDestroy(graph));
  return exec;
}

HostBatch make_host_batch(unsigned seed) {
  HostBatch batch;
  CHECK(cudaMallocHost(&batch.images, kBatch * kPixels * sizeof(float)));
  CHECK(cudaMallocHost(&batch.labels, kBatch * sizeof(int)));
  std::vector<float> images = pseudo_random(kBatch * kPixels, 2.0f, seed);
  std::memcpy(batch.images, images.data(), images.size() * sizeof(float));
  for (int b = 0; b < kBatch; ++b) batch.labels[b] = static_cast<int>((b * 7 + seed) % kClasses);
  return batch;
}

Pipeline make_pipeline(const Model& m, bool use_graph) {
  Pipeline p;
  CHECK(cudaStreamCreateWithFlags(&p.copy, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&p.compute, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&p.batch_ready, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&p.batch_consumed, cudaEventDisableTiming));
  CHECK(cudaEventCreate(&p.step_start));
  CHECK(cudaEventCreate(&p.step_end));
  for (int i = 0; i < kHostBatches; ++i) p.batches[i] = make_host_batch(100u + i);
  CHECK(cudaMallocHost(&p.host_loss, sizeof(float)));
  // Nothing consumed the input buffer yet; record once so the first wait is satisfied.
  CHECK(cudaEventRecord(p.batch_consumed, p.compute));
  if (use_graph) p.optimizer_graph = capture_optimizer(m, p.compute);
  return p;
}

void free_pipeline(Pipeline& p) {
  if (p.optimizer_graph) CHECK(cudaGraphExecDestroy(p.optimizer_graph));
  for (HostBatch& b : p.batches) {
    CHECK(cudaFreeHost(b.images));
    CHECK(cudaFreeHost(b.labels));
  }
  CHECK(cudaFreeHost(p.host_loss));
  for (cudaEvent_t e : {p.batch_ready, p.batch_consumed, p.step_start, p.step_end}) CHECK(cudaEventDestroy(e));
  CHECK(cudaStreamDestroy(p.copy));
  CHECK(cudaStreamDestroy(p.compute));
}

// The copy stream may overwrite the device input only after the previous step consumed it.
void upload_batch(const Model& m, Pipeline& p, int step) {
  const HostBatch& batch = p.batches[step % kHostBatches];
  CHECK(cudaStreamWaitEvent(p.copy, p.batch_consumed, 0));
  CHECK(cudaMemcpyAsync(m.x, batch.images, kBatch * kPixels * sizeof(float), cudaMemcpyHostToDevice, p.copy));
  CHECK(cudaMemcpyAsync(m.labels, batch.labels, kBatch * sizeof(int), cudaMemcpyHostToDevice, p.copy));
  CHECK(cudaEventRecord(p.batch_ready, p.copy));
}

void train_on_batch(const Model& m, Pipeline& p) {
  cudaStream_t s = p.compute;
  CHECK(cudaStreamWaitEvent(s, p.batch_ready, 0));
  forward(m, s);
  backward(m, s);
  CHECK(cudaEventRecord(p.batch_consumed, s));
  if (p.optimizer_graph)
    CHECK(cudaGraphLaunch(p.optimizer_graph, s));
  else
    optimizer_step(m, s);
  weight_decay(m, s);
  CHECK(cudaMemcpyAsync(p.host_loss, m.loss, sizeof(float), cudaMemcpyDeviceToHost, s));
}

struct StepTiming {
  double host_ms = 0;
  float device_ms = 0;
  float loss = 0;
};

StepTiming run_step(const Model& m, Pipeline& p, int step) {
  Range range("train_step");
  auto start = std::chrono::steady_clock::now();
  CHECK(cudaEventRecord(p.step_start, p.compute));
  upload_batch(m, p, step);
  train_on_batch(m, p);
  CHECK(cudaEventRecord(p.step_end, p.compute));
  CHECK(cudaStreamSynchronize(p.compute));  // the loss is on the host now
  CHECK(cudaDeviceSynchronize());           // end-of-step barrier: both streams are idle
  StepTiming timing;
  timing.host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  CHECK(cudaEventElapsedTime(&timing.device_ms, p.step_start, p.step_end));
  timing.loss = *p.host_loss;
  return timing;
}

struct Options {
  int steps = 20;
  bool graph = false;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--graph") == 0) {
      options.graph = true;
    } else if (std::atoi(argv[i]) > 0) {
      options.steps = std::atoi(argv[i]);
    } else {
      std::fprintf(stderr, "usage: demo_train [steps=20] [--graph]\n");
      std::exit(EXIT_FAILURE);
    }
  }
  return options;
}

// True on the simulated device, which times kernels without running them: the loss read back
// is then not a result, and is not printed.
bool print_header(const Options& options) {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("demo_train on %s: %d steps, batch %d, 2 streams, optimizer %s\n", prop.name,
              options.steps, kBatch, options.graph ? "replayed from a CUDA graph" : "launched directly");
  const bool simulated = std::strstr(prop.name, "devsim") != nullptr;
  if (simulated) std::printf("(simulated device: kernels are timed, not executed, so no loss is printed)\n");
  return simulated;
}

void print_summary(const std::vector<StepTiming>& steps) {
  double total = 0, low = steps.front().host_ms, high = steps.front().host_ms;
  for (const StepTiming& t : steps) {
    total += t.host_ms;
    low = std::min(low, t.host_ms);
    high = std::max(high, t.host_ms);
  }
  std::printf("demo_train summary: %zu steps, step time avg %.3f ms, min %.3f ms, max %.3f ms, total %.3f ms\n",
              steps.size(), total / steps.size(), low, high, total);
}

int run(const Options& options) {
  const bool simulated = print_header(options);
  Model model = make_model();
  Pipeline pipeline = make_pipeline(model, options.graph);
  std::vector<StepTiming> timings;
  for (int step = 0; step < options.steps; ++step) {
    StepTiming t = run_step(model, pipeline, step);
    if (simulated) {
      std::printf("step %3d  host %.3f ms  device %.3f ms\n", step + 1, t.host_ms, t.device_ms);
    } else {
      std::printf("step %3d  loss %.4f  host %.3f ms  device %.3f ms\n", step + 1, t.loss, t.host_ms, t.device_ms);
    }
    timings.push_back(t);
    if (profagent_step) profagent_step();
  }
  print_summary(timings);
  free_pipeline(pipeline);
  free_model(model);
  return 0;
}

}  // namespace demo

int main(int argc, char** argv) { return demo::run(demo::parse(argc, argv)); }
