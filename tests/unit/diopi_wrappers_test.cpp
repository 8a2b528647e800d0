// The generated DIOPI wrappers (scripts/gen_diopi_wrappers.py over tests/vendorsim's header),
// driven directly: a test "vendor" function stands in for the real operator and checks every
// argument it receives through the wrapper bit for bit — by-value diopiSize_t, floats and
// doubles mixed with integers, 25 parameters, arguments passed on the stack — with recording
// off and on; results and exceptions come back unchanged; shapes are read through the DIOPI
// runtime functions and reach the collector.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cstring>
#include <stdexcept>

#include "collector/api.h"
#include "collector/names.h"
#include "collector/shapes.h"
#include "collector/thread_buffer.h"
#include "diopi_sim/functions.h"
#include "hooks/diopi/wrapper_support.h"

using namespace profagent;
using namespace profagent::hooks::diopi;

namespace {

const WrapperEntry& entry(const char* name) {
  for (size_t i = 0; i < kWrapperCount; ++i) {
    if (std::strcmp(kWrappers[i].name, name) == 0) return kWrappers[i];
  }
  FAIL("no wrapper generated for " << name);
  return kWrappers[0];
}

// Copy `variant` of the wrapper, forwarding to `real`.
template <typename Fn>
Fn* install(const char* name, Fn* real, size_t variant = 0) {
  entry(name).reals[variant].store(reinterpret_cast<void*>(real));
  return reinterpret_cast<Fn*>(entry(name).wrappers[variant]);
}

struct RecordingOn {
  RecordingOn() { collector::g_record_state.store(uint8_t(collector::RecordState::Record)); }
  ~RecordingOn() { collector::g_record_state.store(uint8_t(collector::RecordState::Off)); }
};

const int64_t kA[] = {1, -2, 3}, kB[] = {INT64_MAX}, kC[] = {INT64_MIN, 0}, kD[] = {7, 7, 7, 7}, kE[] = {42};
int64_t g_dims[] = {5, 6};
const diopiScalar_t kScalar = {diopi_dtype_float64, {-0.0}};
auto* const kCtx = reinterpret_cast<diopiContextHandle_t>(0x1234);
auto* const kOut = reinterpret_cast<diopiTensorHandle_t>(0x5678);
auto* const kIn = reinterpret_cast<diopiConstTensorHandle_t>(0x9abc);
int g_probe_calls = 0;

bool same(diopiSize_t got, const int64_t* data, int64_t len) { return got.data == data && got.len == len; }
bool bits(double got, double want) { return std::memcmp(&got, &want, sizeof got) == 0; }
bool bits(float got, float want) { return std::memcmp(&got, &want, sizeof got) == 0; }

diopiError_t probe(diopiContextHandle_t ctx, diopiSize_t a, float f1, int64_t i1, double d1,
                   diopiSize_t b, const bool flag, float f2, diopiSize_t c, const char* text, double d2,
                   int32_t i32, diopiSize_t d, float f3, diopiSize_t e, const int64_t i2, double d3,
                   float f4, const diopiScalar_t* scalar, diopiReduction_t reduction, uint8_t small,
                   double d4, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t* dims) {
  ++g_probe_calls;
  CHECK(ctx == kCtx);
  CHECK((same(a, kA, 3) && same(b, kB, 1) && same(c, kC, 2) && same(d, kD, 4) && same(e, kE, 1)));
  CHECK((bits(f1, 1.5f) && bits(f2, -0.0f) && bits(f3, 3.4e38f) && bits(f4, 1e-45f)));
  CHECK((bits(d1, 2.25) && bits(d2, -1e308) && bits(d3, 5e-324) && bits(d4, 0.1)));
  CHECK((i1 == INT64_MIN && i2 == INT64_MAX && i32 == -7 && small == 255 && flag));
  CHECK((std::strcmp(text, "reflect") == 0 && scalar == &kScalar && reduction == ReductionSum));
  CHECK((out == kOut && input == kIn && dims == g_dims));
  return diopiError_t(12);
}

diopiError_t call_probe(decltype(&probe) wrapper) {
  return wrapper(kCtx, {kA, 3}, 1.5f, INT64_MIN, 2.25, {kB, 1}, true, -0.0f, {kC, 2}, "reflect",
                 -1e308, -7, {kD, 4}, 3.4e38f, {kE, 1}, INT64_MAX, 5e-324, 1e-45f, &kScalar,
                 ReductionSum, 255, 0.1, kOut, kIn, g_dims);
}

int64_t g_deform_sum = 0;

diopiError_t deform(diopiContextHandle_t ctx, diopiConstTensorHandle_t t1, diopiConstTensorHandle_t t2,
                    diopiConstTensorHandle_t t3, diopiConstTensorHandle_t t4, diopiConstTensorHandle_t t5,
                    diopiConstTensorHandle_t t6, diopiTensorHandle_t t7, diopiTensorHandle_t t8,
                    diopiTensorHandle_t t9, diopiTensorHandle_t t10, diopiTensorHandle_t t11,
                    diopiTensorHandle_t t12, diopiConstTensorHandle_t t13, int64_t k1, int64_t k2,
                    int64_t k3, int64_t k4, int64_t k5, int64_t k6, int64_t k7, int64_t k8,
                    int64_t k9, int64_t k10, const bool with_bias) {
  const void* tensors[] = {t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13};
  for (int i = 0; i < 13; ++i) CHECK(reinterpret_cast<uintptr_t>(tensors[i]) == uintptr_t(0x100 * (i + 1)));
  const int64_t ints[] = {k1, k2, k3, k4, k5, k6, k7, k8, k9, k10};
  for (int i = 0; i < 10; ++i) CHECK(ints[i] == int64_t(1000 + i));
  CHECK(ctx == kCtx);
  CHECK(with_bias);
  g_deform_sum += 1;
  return diopiSuccess;
}

template <typename T>
T handle(int i) { return reinterpret_cast<T>(uintptr_t(0x100 * i)); }

diopiError_t call_deform(decltype(&deform) wrapper) {
  using C = diopiConstTensorHandle_t;
  using M = diopiTensorHandle_t;
  return wrapper(kCtx, handle<C>(1), handle<C>(2), handle<C>(3), handle<C>(4), handle<C>(5), handle<C>(6),
                 handle<M>(7), handle<M>(8), handle<M>(9), handle<M>(10), handle<M>(11), handle<M>(12),
                 handle<C>(13), 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, true);
}

diopiError_t throwing_relu(diopiContextHandle_t, diopiTensorHandle_t, diopiConstTensorHandle_t) {
  throw std::runtime_error("vendor failure");
}

}  // namespace

TEST_CASE("the generator wrapped the operators and only them") {
  CHECK(kWrapperCount >= 20);
  for (size_t i = 1; i < kWrapperCount; ++i) CHECK(std::strcmp(kWrappers[i - 1].name, kWrappers[i].name) < 0);
  for (size_t i = 0; i < kWrapperCount; ++i) {
    CHECK(std::strncmp(kWrappers[i].name, "diopiGet", 8) != 0);   // runtime and info functions
    CHECK(std::strcmp(kWrappers[i].name, "diopiSimRegisterHook") != 0);  // unparseable: skipped
    CHECK(std::strcmp(kWrappers[i].name, "diopiSimMacroArgs") != 0);
  }
}

TEST_CASE("a 25-argument probe with by-value size lists and mixed floats arrives bit-exact") {
  auto* wrapper = install("diopiSimArgProbe", &probe);
  g_probe_calls = 0;
  CHECK(call_probe(wrapper) == 12);  // not recording: tail call
  {
    RecordingOn on;
    CHECK(call_probe(wrapper) == 12);  // recording: through OperatorCall
  }
  CHECK(g_probe_calls == 2);
}

TEST_CASE("the 25-parameter mmcv operator forwards 13 handles and 10 integers on the stack") {
  auto* wrapper = install("diopiModulatedDeformConvBackwardMmcv", &deform);
  g_deform_sum = 0;
  CHECK(call_deform(wrapper) == diopiSuccess);
  RecordingOn on;
  CHECK(call_deform(wrapper) == diopiSuccess);
  CHECK(g_deform_sum == 2);
}

TEST_CASE("each copy of a wrapper forwards to its own real definition") {
  auto* first = install("diopiSimArgProbe", &probe, 0);
  auto* last = install("diopiSimArgProbe", &probe, kRealTargetVariants - 1);
  CHECK(reinterpret_cast<void*>(first) != reinterpret_cast<void*>(last));
  g_probe_calls = 0;
  RecordingOn on;
  CHECK(call_probe(last) == 12);
  CHECK(call_probe(first) == 12);
  CHECK(g_probe_calls == 2);
}

TEST_CASE("an exception thrown by the real operator passes through the wrapper") {
  auto* wrapper = install("diopiRelu", &throwing_relu);
  RecordingOn on;
  CHECK_THROWS_WITH(wrapper(kCtx, kOut, kIn), "vendor failure");
  CHECK_THROWS_WITH(wrapper(kCtx, kOut, kIn), "vendor failure");  // state stayed balanced
}

namespace {

const int64_t kShape4[] = {2, 3, 4, 5};

int fake_shape(const void* tensor, SizeView* size) {
  *size = tensor == kIn ? SizeView{kShape4, 4} : SizeView{kShape4, 1};
  return 0;
}
int fake_dtype(const void*, int* dtype) {
  *dtype = diopi_dtype_float32;
  return 0;
}
diopiError_t add_ok(diopiContextHandle_t, diopiTensorHandle_t, diopiConstTensorHandle_t,
                    diopiConstTensorHandle_t, const diopiScalar_t*) {
  return diopiSuccess;
}

}  // namespace

TEST_CASE("shapes and dtypes of tensor arguments reach the operator event") {
  auto* wrapper = install("diopiAdd", &add_ok);
  g_get_tensor_shape.store(&fake_shape);
  g_get_tensor_dtype.store(&fake_dtype);
  g_record_shapes.store(true);
  collector::drain_all();  // start from an empty buffer
  {
    RecordingOn on;
    CHECK(wrapper(kCtx, kOut, kIn, nullptr, &kScalar) == diopiSuccess);
  }
  g_record_shapes.store(false);
  const auto names = collector::names_snapshot();
  const HostEvent* add = nullptr;
  const collector::DrainResult drained = collector::drain_all();
  for (const auto& thread : drained.threads)
    for (const HostEvent& e : thread.events)
      if (e.kind == uint8_t(EventKind::Operator) && names.at(e.name) == "diopiAdd") add = &e;
  REQUIRE(add != nullptr);
  std::vector<std::vector<int64_t>> dims;
  std::vector<std::string> types;
  collector::read_shapes(add->arg0, names, dims, types);
  CHECK(dims == std::vector<std::vector<int64_t>>{{2}, {2, 3, 4, 5}, {}, {}});
  CHECK(types == std::vector<std::string>{"float32", "float32", "", "diopiScalar_t*"});
}
