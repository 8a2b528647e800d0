// The pure parts of agent/python_startup.h (unit-tested on their own).
#include "agent/python_startup.h"

namespace profagent::agent {

std::string python_option_without_hook(const std::vector<std::string>& arguments) {
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& argument = arguments[i];
    if (argument.size() < 2 || argument[0] != '-' || argument == "--") return {};  // script, "-", "--"
    if (argument[1] == '-') {  // long options; one takes the next argument
      if (argument == "--check-hash-based-pycs") ++i;
      continue;
    }
    for (size_t j = 1; j < argument.size(); ++j) {
      const char flag = argument[j];
      if (flag == 'E' || flag == 'I' || flag == 'S') return std::string("-") + flag;
      if (flag == 'c' || flag == 'm') return {};  // the rest belongs to the program
      if (flag == 'W' || flag == 'X') {
        if (j + 1 == argument.size()) ++i;  // the value is the next argument
        break;
      }
    }
  }
  return {};
}

std::string python_path_with(const std::string& folder, const char* current) {
  return current == nullptr ? folder : folder + ":" + current;
}

}  // namespace profagent::agent
