// torch's operator range names (emit_nvtx, several torch versions) parsed back into operators.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "hooks/nvtx/torch_names.h"

using profagent::hooks::nvtx::parse_torch_op_name;
using profagent::hooks::nvtx::TorchOpName;

namespace {

std::vector<std::vector<int64_t>> shapes_of(const TorchOpName& op) {
  std::vector<std::vector<int64_t>> out;
  for (uint32_t i = 0; i < op.input_count; ++i) out.emplace_back(op.shapes[i].dims, op.shapes[i].dims + op.shapes[i].rank);
  return out;
}

}  // namespace

TEST_CASE("torch 2.x names with shapes and input op ids") {
  TorchOpName op;
  REQUIRE(parse_torch_op_name("aten::addmm, seq = 12, op_id = 345, sizes = [[3], [2, 3], [3, 3], [], []], "
                              "input_op_ids = [(0,-1), (343,0), (344,0), (0,-1), (0,-1)]", op));
  CHECK(op.name == "aten::addmm");
  CHECK(op.sequence == 12);
  CHECK(op.op_id == 345);
  CHECK(op.has_sizes);
  CHECK(shapes_of(op) == std::vector<std::vector<int64_t>>{{3}, {2, 3}, {3, 3}, {}, {}});
  REQUIRE(op.input_id_count == 5);
  CHECK(op.input_ids[1][0] == 343);
  CHECK(op.input_ids[1][1] == 0);
  CHECK(int64_t(op.input_ids[0][1]) == -1);
  CHECK_FALSE(op.truncated);
}

TEST_CASE("names without shapes, without a sequence number, and torch 1.x forms") {
  TorchOpName op;
  REQUIRE(parse_torch_op_name("aten::relu, seq = 5, op_id = 7", op));
  CHECK((op.name == "aten::relu" && op.sequence == 5 && op.op_id == 7 && !op.has_sizes));
  REQUIRE(parse_torch_op_name("autograd::engine::evaluate_function: AddmmBackward0, op_id = 9", op));
  CHECK((op.name == "autograd::engine::evaluate_function: AddmmBackward0" && op.sequence == -1));
  REQUIRE(parse_torch_op_name("aten::mm, seq = 3, sizes = [[2, 3], [3, 4]]", op));
  CHECK((op.op_id == 0 && op.sequence == 3));
  CHECK(shapes_of(op) == std::vector<std::vector<int64_t>>{{2, 3}, {3, 4}});
  REQUIRE(parse_torch_op_name("MmBackward, stashed seq = 3", op));
  CHECK((op.name == "MmBackward" && op.sequence == 3));
  REQUIRE(parse_torch_op_name("MmBackward, stashed seq=4", op));
  CHECK(op.sequence == 4);
}

TEST_CASE("a tensor list's nested sizes become consecutive inputs") {
  TorchOpName op;
  REQUIRE(parse_torch_op_name("aten::cat, seq = 9, op_id = 2, sizes = [[[4, 16], [4, 16]], []]", op));
  CHECK(shapes_of(op) == std::vector<std::vector<int64_t>>{{4, 16}, {4, 16}, {}});
}

TEST_CASE("plain ranges and damaged names are not operators") {
  TorchOpName op;
  CHECK_FALSE(parse_torch_op_name("iteration", op));
  CHECK_FALSE(parse_torch_op_name("load, batch 3", op));
  CHECK_FALSE(parse_torch_op_name(", seq = 3", op));                       // no name
  CHECK_FALSE(parse_torch_op_name("aten::add, seq = x", op));              // not a number
  CHECK_FALSE(parse_torch_op_name("aten::add, sizes = [[1, 2]", op));      // unclosed
  CHECK_FALSE(parse_torch_op_name("aten::add, seq = 1, colour = red", op));  // unknown key
}

TEST_CASE("inputs past the limits are left out and said") {
  std::string text = "aten::stack, op_id = 1, sizes = [";
  for (uint32_t i = 0; i < TorchOpName::kMaxInputs + 3; ++i) text += i ? ", [1]" : "[1]";
  text += "]";
  TorchOpName op;
  REQUIRE(parse_torch_op_name(text, op));
  CHECK(op.input_count == TorchOpName::kMaxInputs);
  CHECK(op.truncated);
}
