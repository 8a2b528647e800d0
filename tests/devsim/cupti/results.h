// CUptiResult names and messages, for cuptiGetResultString / cuptiGetErrorMessage and for
// parsing DEVSIM_CUPTI_FAIL.
#pragma once

#include <cupti_result.h>

#include <string_view>

namespace profagent::devsim_cupti {

// "CUPTI_ERROR_INVALID_PARAMETER" etc., or nullptr for a value CUPTI does not define.
const char* result_name(CUptiResult result);
// One sentence for the result, or nullptr.
const char* result_message(CUptiResult result);
// Inverse of result_name; false if the name is unknown.
bool result_from_name(std::string_view name, CUptiResult* result);

}  // namespace profagent::devsim_cupti
