// torch_nvtx_app: NVTX ranges named exactly as torch's emit_nvtx names its operators, without
// torch: what the agent sees of a CUDA torch run under emit_nvtx(record_shapes=True).
//
//   torch_nvtx_app [steps=3]
//
// Per step, on the main thread, a forward pass (torch 2.x names: `name, seq = N, op_id = H,
// sizes = [...], input_op_ids = [...]`): aten::linear (holding aten::t and aten::addmm),
// aten::relu, aten::cat (a tensor-list argument: nested sizes, as older torch wrote them) and
// an operator without a sequence number; then on another thread ("pt_autograd_0", as torch's
// engine threads are named) the backward pass: `autograd::engine::evaluate_function: X`
// holding `X, seq = N, op_id = H` holding the ops it runs. Once: torch 1.x names (`name, seq =
// N, sizes = ...` and a backward `..., stashed seq = N`) and names without shapes. Every op
// that stands for device work launches one kernel; each step ends with a record_function range
// (`Optimizer.step#SGD.step, op_id = H`: a user range, not an operator). Everything emitted is printed as
// `expect {...}` for the checker.
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

__global__ void op_kernel(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

extern "C" void profagent_step(void) __attribute__((weak));  // ProfilerStep#N per step, for HTA

namespace {

constexpr int kN = 1 << 10;
float* g_data = nullptr;
int g_failures = 0;
uint64_t g_next_handle = 1000;
std::string g_emitted;  // the expect JSON's "ops" entries

uint32_t tid() { return uint32_t(syscall(SYS_gettid)); }

void launch() {
  op_kernel<<<(kN + 255) / 256, 256>>>(g_data, kN);
  if (cudaGetLastError() != cudaSuccess) ++g_failures;
}

struct OpSpec {
  std::string name;
  long seq = -1;               // -1: none printed
  std::string sizes;           // torch's text, "" when not recorded
  std::string input_ids;       // torch's text, "" when not recorded
  bool kernel = false;
  bool stashed = false;        // torch 1.x backward: ", stashed seq = N"
  bool with_op_id = true;      // torch 1.x printed no op_id
  std::string flat_sizes;      // the sizes as the trace must show them (JSON), "" none
};

// Pushes one operator range named as torch does; returns its handle (0 without op_id).
uint64_t push(const OpSpec& op) {
  const uint64_t handle = op.with_op_id ? g_next_handle++ : 0;
  std::string text = op.name;
  if (op.seq >= 0) text += (op.stashed ? ", stashed seq = " : ", seq = ") + std::to_string(op.seq);
  if (handle != 0) text += ", op_id = " + std::to_string(handle);
  if (!op.sizes.empty()) text += ", sizes = " + op.sizes;
  if (!op.input_ids.empty()) text += ", input_op_ids = " + op.input_ids;
  nvtxRangePushA(text.c_str());
  if (op.kernel) launch();
  if (!g_emitted.empty()) g_emitted += ",";
  g_emitted += "{\"name\": \"" + op.name + "\", \"seq\": " + std::to_string(op.seq) +
               ", \"op_id\": " + std::to_string(handle) + ", \"tid\": " + std::to_string(tid()) +
               ", \"kernel\": " + (op.kernel ? "true" : "false") +
               ", \"sizes\": " + (op.flat_sizes.empty() ? "null" : op.flat_sizes) + "}";
  return handle;
}
void pop() { nvtxRangePop(); }

void leaf(const OpSpec& op) {
  push(op);
  pop();
}

struct Forward {
  long seq;
  uint64_t addmm = 0;
};

// One forward pass; sequence numbers as autograd gives them (an op that makes a graph node
// takes the next number; ops inside a composite one share the number of their first node).
Forward forward(long seq) {
  Forward f{seq};
  push({"aten::linear", seq, "[[4, 8], [16, 8], [16]]", "[(0,-1), (0,-1), (0,-1)]", false, false, true,
        "[[4, 8], [16, 8], [16]]"});
  const uint64_t t = push({"aten::t", seq, "[[16, 8]]", "[(0,-1)]", false, false, true, "[[16, 8]]"});
  pop();
  f.addmm = push({"aten::addmm", seq + 1, "[[16], [4, 8], [8, 16], [], []]",
                  "[(0,-1), (0,-1), (" + std::to_string(t) + ",0), (0,-1), (0,-1)]", true, false, true,
                  "[[16], [4, 8], [8, 16], [], []]"});
  pop();
  pop();
  leaf({"aten::relu", seq + 2, "[[4, 16]]", "[(" + std::to_string(f.addmm) + ",0)]", true, false, true, "[[4, 16]]"});
  leaf({"aten::cat", seq + 3, "[[[4, 16], [4, 16]], []]", "", true, false, true, "[[4, 16], [4, 16], []]"});
  leaf({"aten::empty", -1, "[[], [], [], [], [], []]", "", false, false, true, "[[], [], [], [], [], []]"});
  return f;
}

void backward_node(const std::string& node, long seq, const OpSpec& inner) {
  push({"autograd::engine::evaluate_function: " + node, -1, "", "", false, false, true, ""});
  push({node, seq, "[[4, 16]]", "", false, false, true, "[[4, 16]]"});
  leaf(inner);
  pop();
  pop();
}

void backward(long seq) {
  backward_node("CatBackward0", seq + 3, {"aten::narrow", -1, "[[8, 16], [], [], []]", "", true, false, true,
                                          "[[8, 16], [], [], []]"});
  backward_node("ReluBackward0", seq + 2, {"aten::threshold_backward", -1, "[[4, 16], [4, 16], []]", "", true,
                                           false, true, "[[4, 16], [4, 16], []]"});
  backward_node("AddmmBackward0", seq + 1, {"aten::mm", -1, "[[4, 16], [16, 8]]", "", true, false, true,
                                            "[[4, 16], [16, 8]]"});
  backward_node("TBackward0", seq, {"aten::t", -1, "[[8, 16]]", "", false, false, true, "[[8, 16]]"});
}

// Torch 1.x: no op_id, no input_op_ids; backward functions said "stashed seq"; and 2.x names
// recorded without shapes.
void older_formats() {
  leaf({"aten::mul", 500, "[[3], []]", "", true, false, false, "[[3], []]"});
  std::thread engine([] {
    leaf({"MulBackward0", 500, "", "", true, true, false, ""});
  });
  engine.join();
  leaf({"aten::add", 501, "", "", true, false, true, ""});
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 3;
  if (cudaMalloc(&g_data, kN * sizeof(float)) != cudaSuccess) ++g_failures;
  long seq = 10;
  for (int step = 0; step < steps; ++step, seq += 4) {
    forward(seq);
    std::thread engine([seq] {
      pthread_setname_np(pthread_self(), "pt_autograd_0");
      backward(seq);
    });
    engine.join();
    // A record_function range (user scope) as emit_nvtx names it: a user range, no operator.
    const std::string user = "Optimizer.step#SGD.step, op_id = " + std::to_string(g_next_handle++);
    nvtxRangePushA(user.c_str());
    nvtxRangePop();
    if (profagent_step) profagent_step();
  }
  older_formats();
  if (cudaDeviceSynchronize() != cudaSuccess) ++g_failures;
  cudaFree(g_data);
  std::printf("expect {\"failures\": %d, \"steps\": %d, \"ops\": [%s]}\n", g_failures, steps, g_emitted.c_str());
  return g_failures == 0 ? 0 : 1;
}
