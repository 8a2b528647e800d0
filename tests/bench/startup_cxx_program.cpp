// A C++ program with its own libstdc++ (as torch's processes have), for startup_bench: it
// throws and catches exceptions (one through a std::function), parses a number and writes
// through iostreams. Under the agent, which carries a private copy of the C++ runtime, it must
// behave and print exactly as without it.
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>

int main() {
  int caught = 0;
  try {
    throw std::runtime_error("thrown in main");
  } catch (const std::exception& error) {
    std::cout << "caught: " << error.what() << '\n';
    ++caught;
  }
  const std::function<int(const std::string&)> parse = [](const std::string& text) { return std::stoi(text); };
  try {
    parse("not a number");
  } catch (const std::invalid_argument&) {
    std::cout << "caught: std::invalid_argument from std::stoi\n";
    ++caught;
  }
  std::cout << "parsed " << parse("42") << ", caught " << caught << std::endl;
  return caught == 2 ? 0 : 1;
}
