#include "hooks/nvtx/torch_names.h"


namespace profagent::hooks::nvtx {
namespace {

// The keys torch writes after an operator's name, in the order it writes them.
constexpr std::string_view kSeq = ", seq = ";
constexpr std::string_view kStashedSeq = ", stashed seq = ";
constexpr std::string_view kStashedSeqTight = ", stashed seq=";
constexpr std::string_view kOpId = ", op_id = ";
constexpr std::string_view kSizes = ", sizes = ";
constexpr std::string_view kInputOpIds = ", input_op_ids = ";
constexpr std::string_view kKeys[] = {kSeq, kStashedSeq, kStashedSeqTight, kOpId, kSizes, kInputOpIds};

struct Cursor {
  std::string_view text;
  size_t at = 0;
  bool done() const noexcept { return at >= text.size(); }
  char peek() const noexcept { return done() ? '\0' : text[at]; }
  void skip_spaces() noexcept {
    while (!done() && text[at] == ' ') ++at;
  }
  bool take(std::string_view what) noexcept {
    if (text.substr(at, what.size()) != what) return false;
    at += what.size();
    return true;
  }
  bool take_char(char c) noexcept {
    skip_spaces();
    if (peek() != c) return false;
    ++at;
    return true;
  }
  bool integer(int64_t& value) noexcept {
    skip_spaces();
    bool negative = false;
    if (peek() == '-') negative = true, ++at;
    if (peek() < '0' || peek() > '9') return false;
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') v = v * 10 + uint64_t(text[at++] - '0');
    value = negative ? -int64_t(v) : int64_t(v);
    return true;
  }
};

// One innermost list of sizes: a tensor's shape ([] for a 0-d tensor or a non-tensor).
bool parse_shape(Cursor& c, TorchOpName& out) noexcept {
  const uint32_t first = out.dim_count;
  int32_t rank = 0;
  if (!c.take_char(']')) {
    do {
      int64_t dim = 0;
      if (!c.integer(dim)) return false;
      if (out.dim_count < TorchOpName::kMaxDims) out.dims[out.dim_count++] = dim; else out.truncated = true;
      ++rank;
    } while (c.take_char(','));
    if (!c.take_char(']')) return false;
  }
  if (out.input_count >= TorchOpName::kMaxInputs) {
    out.truncated = true;
    return true;
  }
  collector::ShapeArg& arg = out.shapes[out.input_count++];
  arg.rank = rank;
  arg.dims = out.dims + first;
  return true;
}

// A list whose elements are lists: the arguments, or (older torch) a tensor list's shapes,
// flattened into consecutive inputs as current torch writes them.
bool parse_lists(Cursor& c, TorchOpName& out, int depth) noexcept {
  if (depth > 4 || !c.take_char('[')) return false;
  c.skip_spaces();
  if (c.peek() != '[') return depth > 0 && parse_shape(c, out);
  do {
    c.skip_spaces();
    const size_t open = c.at;
    if (!c.take_char('[')) return false;
    c.skip_spaces();
    const bool nested = c.peek() == '[';
    c.at = open;
    if (nested ? !parse_lists(c, out, depth + 1) : !(c.take_char('[') && parse_shape(c, out))) return false;
  } while (c.take_char(','));
  return c.take_char(']');
}

bool parse_input_ids(Cursor& c, TorchOpName& out) noexcept {
  if (!c.take_char('[')) return false;
  if (c.take_char(']')) return true;
  do {
    int64_t op = 0, output = 0;
    if (!c.take_char('(') || !c.integer(op) || !c.take_char(',') || !c.integer(output) || !c.take_char(')')) {
      return false;
    }
    if (out.input_id_count < TorchOpName::kMaxInputs) {
      out.input_ids[out.input_id_count][0] = uint64_t(op);
      out.input_ids[out.input_id_count++][1] = uint64_t(output);
    } else {
      out.truncated = true;
    }
  } while (c.take_char(','));
  return c.take_char(']');
}

bool parse_field(Cursor& c, TorchOpName& out) noexcept {
  int64_t value = 0;
  if (c.take(kSeq) || c.take(kStashedSeq) || c.take(kStashedSeqTight)) {
    if (!c.integer(value)) return false;
    out.sequence = value;
    return true;
  }
  if (c.take(kOpId)) {
    if (!c.integer(value)) return false;
    out.op_id = uint64_t(value);
    return true;
  }
  if (c.take(kSizes)) return out.has_sizes = true, parse_lists(c, out, 0);
  if (c.take(kInputOpIds)) return parse_input_ids(c, out);
  return false;
}

// Where the name ends: the first ", " that starts one of the keys (one pass over the text: the
// sizes list that follows has many ", ").
size_t name_end_of(std::string_view text) noexcept {
  for (size_t at = text.find(", "); at != std::string_view::npos; at = text.find(", ", at + 2)) {
    const std::string_view rest = text.substr(at);
    for (std::string_view key : kKeys) {
      if (rest.starts_with(key)) return at;
    }
  }
  return std::string_view::npos;
}

}  // namespace

bool parse_torch_op_name(std::string_view text, TorchOpName& out) noexcept {
  const size_t name_end = name_end_of(text);
  if (name_end == std::string_view::npos || name_end == 0) return false;
  out.sequence = -1, out.op_id = 0, out.has_sizes = false, out.truncated = false;
  out.input_count = out.dim_count = out.input_id_count = 0;
  out.name = text.substr(0, name_end);
  Cursor c{text, name_end};
  while (!c.done()) {
    if (!parse_field(c, out)) return false;
  }
  return true;
}

}  // namespace profagent::hooks::nvtx
