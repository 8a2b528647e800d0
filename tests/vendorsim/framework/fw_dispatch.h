// The framework's choice between the vendor's operator and its own fallback, made ONCE while the
// library loads (static initialisation), from the addresses of the weak diopi* references — the way
// DIPU registers its DIOPI wrappers (only where the weak address is non-null, else a CPU fallback).
// A profiler that exported diopi* symbols would flip these choices; one that patches GOT slots must
// not.
#pragma once

#include <cstdint>
#include <string>

#include "diopi_sim/functions.h"

namespace frameworksim {

struct VendorOps {
  bool convolution2d, convolution2d_backward, batch_norm, batch_norm_backward, relu,
      threshold_backward, linear, linear_backward, matmul, cross_entropy, cross_entropy_backward,
      add, fill, copy, softmax, adamw, sgd, gelu, max_pool2d, dropout, cat;
};

const VendorOps& vendor_ops();
const std::string& implemented_ops();  // comma-separated names, sorted

// The vendor's answer, or -1 when the framework must run its fallback instead.
int vendor_result(diopiError_t error);
void count_fallback();
int64_t fallback_calls();

}  // namespace frameworksim
