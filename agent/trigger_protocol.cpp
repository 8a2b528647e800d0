#include "agent/trigger_protocol.h"

#include <charconv>
#include <string_view>

namespace profagent::agent::trigger {
namespace {

// The value of " key=<digits>" in `line`, or nullopt.
std::optional<uint64_t> number_after(std::string_view line, std::string_view key) {
  const size_t at = line.find(" " + std::string(key) + "=");
  if (at == std::string_view::npos) return std::nullopt;
  const char* begin = line.data() + at + key.size() + 2;
  uint64_t value = 0;
  auto [end, error] = std::from_chars(begin, line.data() + line.size(), value);
  if (error != std::errc{} || end == begin || (end != line.data() + line.size() && *end != ' ')) return std::nullopt;
  return value;
}

// Everything after " dir=" to the end of the line (a directory may hold spaces), or nullopt.
std::optional<std::string> dir_after(std::string_view line) {
  const size_t at = line.find(" dir=");
  if (at == std::string_view::npos) return std::nullopt;
  return std::string(line.substr(at + 5));
}

std::string_view without_newline(const std::string& line) {
  std::string_view view = line;
  if (!view.empty() && view.back() == '\n') view.remove_suffix(1);
  return view;
}

}  // namespace

std::string format(const Request& request) {
  if (request.status) return "status\n";
  if (request.cancel) return "cancel first=" + std::to_string(request.first) + "\n";
  if (request.duration_ms > 0) return "record ms=" + std::to_string(request.duration_ms) + " dir=" + request.output_dir + "\n";
  return "record first=" + std::to_string(request.first) + " steps=" + std::to_string(request.steps) +
         " dir=" + request.output_dir + "\n";
}

std::optional<Request> parse_request(const std::string& text) {
  const std::string_view line = without_newline(text);
  if (line.find('\n') != std::string_view::npos) return std::nullopt;
  Request request;
  if (line == "status") return request.status = true, request;
  if (line.starts_with("cancel ")) {
    const auto first = number_after(line, "first");
    if (!first || *first == 0) return std::nullopt;
    request.cancel = true, request.first = *first;
    return request;
  }
  if (!line.starts_with("record ")) return std::nullopt;
  const std::string_view head = line.substr(0, line.find(" dir="));
  if (const auto ms = number_after(head, "ms")) {
    const auto dir = dir_after(line);
    if (*ms == 0 || !dir) return std::nullopt;
    request.duration_ms = *ms, request.output_dir = *dir;
    return request;
  }
  const auto first = number_after(head, "first");
  const auto steps = number_after(head, "steps");
  const auto dir = dir_after(line);
  if (!first || !steps || *steps == 0 || !dir) return std::nullopt;
  request.first = *first, request.steps = *steps, request.output_dir = *dir;
  return request;
}

std::string format(const Answer& answer) {
  if (!answer.ok) return "error " + answer.error + "\n";
  if (!answer.output_dir.empty() && answer.duration_ms > 0) {
    return "ok ms=" + std::to_string(answer.duration_ms) + " dir=" + answer.output_dir + "\n";
  }
  if (!answer.output_dir.empty()) {
    return "ok first=" + std::to_string(answer.first) + " last=" + std::to_string(answer.last) +
           " dir=" + answer.output_dir + "\n";
  }
  std::string line = "ok step=" + std::to_string(answer.step) + " busy=" + (answer.busy ? "1" : "0");
  if (answer.busy && answer.timed) line += " timed=1";
  else if (answer.busy) line += " first=" + std::to_string(answer.first) + " last=" + std::to_string(answer.last);
  return line + "\n";
}

std::optional<Answer> parse_answer(const std::string& text) {
  const std::string_view line = without_newline(text);
  Answer answer;
  if (line.starts_with("error ")) return answer.error = std::string(line.substr(6)), answer;
  if (!line.starts_with("ok ")) return std::nullopt;
  answer.ok = true;
  const std::string_view head = line.substr(0, line.find(" dir="));
  if (auto dir = dir_after(line); dir && number_after(head, "ms")) {
    answer.duration_ms = *number_after(head, "ms"), answer.output_dir = *dir;
    return answer;
  }
  if (auto dir = dir_after(line)) {
    const auto first = number_after(head, "first"), last = number_after(head, "last");
    if (!first || !last || dir->empty()) return std::nullopt;
    answer.first = *first, answer.last = *last, answer.output_dir = *dir;
    return answer;
  }
  const auto step = number_after(line, "step"), busy = number_after(line, "busy");
  if (!step || !busy) return std::nullopt;
  answer.step = *step, answer.busy = *busy != 0;
  answer.timed = number_after(line, "timed").value_or(0) != 0;
  if (answer.busy) {
    answer.first = number_after(line, "first").value_or(0);
    answer.last = number_after(line, "last").value_or(0);
  }
  return answer;
}

std::string socket_path(const std::string& dir, long pid) { return dir + "/" + std::to_string(pid) + kSocketSuffix; }

}  // namespace profagent::agent::trigger
