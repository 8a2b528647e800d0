#include "fw_dispatch.h"

#include <atomic>
#include <utility>
#include <vector>

namespace frameworksim {
namespace {

// The weak references: null when no loaded library defines the operator. Read here, at load
// time, and never again.
const VendorOps kVendor = {
    diopiConvolution2d != nullptr, diopiConvolution2dBackward != nullptr,
    diopiBatchNorm != nullptr,     diopiBatchNormBackward != nullptr,
    diopiRelu != nullptr,          diopiThresholdBackward != nullptr,
    diopiLinear != nullptr,        diopiLinearBackward != nullptr,
    diopiMatmul != nullptr,        diopiCrossEntropyLoss != nullptr,
    diopiCrossEntropyLossBackward != nullptr, diopiAdd != nullptr,
    diopiFill != nullptr,          diopiCopyInp != nullptr,
    diopiSoftmax != nullptr,
    diopiAdamW != nullptr,         diopiSgd != nullptr,
    diopiGelu != nullptr,          diopiMaxPool2d != nullptr,
    diopiDropout != nullptr,       diopiCat != nullptr,
};

std::string list_implemented() {
  const std::vector<std::pair<const char*, bool>> ops = {
      {"diopiAdamW", kVendor.adamw}, {"diopiAdd", kVendor.add},
      {"diopiBatchNorm", kVendor.batch_norm}, {"diopiBatchNormBackward", kVendor.batch_norm_backward},
      {"diopiCat", kVendor.cat}, {"diopiCopyInp", kVendor.copy}, {"diopiConvolution2d", kVendor.convolution2d},
      {"diopiConvolution2dBackward", kVendor.convolution2d_backward},
      {"diopiCrossEntropyLoss", kVendor.cross_entropy},
      {"diopiCrossEntropyLossBackward", kVendor.cross_entropy_backward},
      {"diopiDropout", kVendor.dropout}, {"diopiFill", kVendor.fill}, {"diopiGelu", kVendor.gelu},
      {"diopiLinear", kVendor.linear}, {"diopiLinearBackward", kVendor.linear_backward},
      {"diopiMatmul", kVendor.matmul}, {"diopiMaxPool2d", kVendor.max_pool2d},
      {"diopiRelu", kVendor.relu}, {"diopiSgd", kVendor.sgd}, {"diopiSoftmax", kVendor.softmax},
      {"diopiThresholdBackward", kVendor.threshold_backward}};
  std::string text;
  for (const auto& [name, implemented] : ops) {
    if (!implemented) continue;
    if (!text.empty()) text += ",";
    text += name;
  }
  return text;
}

const std::string kImplemented = list_implemented();
std::atomic<int64_t> g_fallbacks{0};

}  // namespace

const VendorOps& vendor_ops() { return kVendor; }
const std::string& implemented_ops() { return kImplemented; }

int vendor_result(diopiError_t error) {
  return error == diopiNoImplement || error == diopiForceFallbackToCPU ? -1 : int(error);
}

void count_fallback() { g_fallbacks.fetch_add(1, std::memory_order_relaxed); }
int64_t fallback_calls() { return g_fallbacks.load(std::memory_order_relaxed); }

}  // namespace frameworksim
