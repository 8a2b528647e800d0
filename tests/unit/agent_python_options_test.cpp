// How the agent reads a Python command line before Python does (agent/python_startup.h): which
// options keep the start-up hook from running, and the PYTHONPATH value the hook undoes.
#include <catch2/catch.hpp>

#include "agent/python_startup.h"

using profagent::agent::python_option_without_hook;
using profagent::agent::python_path_with;

TEST_CASE("python options: -E, -I and -S keep the hook out, alone or in a cluster") {
  CHECK(python_option_without_hook({"-E", "train.py"}) == "-E");
  CHECK(python_option_without_hook({"-I", "train.py"}) == "-I");
  CHECK(python_option_without_hook({"-S", "-c", "pass"}) == "-S");
  CHECK(python_option_without_hook({"-uIB", "train.py"}) == "-I");
  CHECK(python_option_without_hook({"-Es", "-m", "pip"}) == "-E");
  CHECK(python_option_without_hook({"-u", "-O", "-S", "x.py"}) == "-S");
}

TEST_CASE("python options: the program's own arguments are not Python's") {
  CHECK(python_option_without_hook({}).empty());
  CHECK(python_option_without_hook({"train.py", "-E"}).empty());
  CHECK(python_option_without_hook({"-c", "-E"}).empty());
  CHECK(python_option_without_hook({"-cimport sys", "-S"}).empty());
  CHECK(python_option_without_hook({"-m", "mod", "-I"}).empty());
  CHECK(python_option_without_hook({"-", "-E"}).empty());
  CHECK(python_option_without_hook({"--", "-E"}).empty());
}

TEST_CASE("python options: option values are skipped, attached or not") {
  CHECK(python_option_without_hook({"-W", "-E", "x.py"}).empty());       // -E is -W's value
  CHECK(python_option_without_hook({"-WignoreE", "x.py"}).empty());      // attached value
  CHECK(python_option_without_hook({"-X", "dev", "-S", "x.py"}) == "-S");
  CHECK(python_option_without_hook({"-Xfrozen_modules=off", "-I"}) == "-I");
  CHECK(python_option_without_hook({"--check-hash-based-pycs", "-E", "x.py"}).empty());
  CHECK(python_option_without_hook({"--check-hash-based-pycs", "always", "-E", "x.py"}) == "-E");
  CHECK(python_option_without_hook({"--version"}).empty());
}

TEST_CASE("PYTHONPATH with the hook's folder first: unset, empty and set values stay recoverable") {
  CHECK(python_path_with("/lib/profagent_python", nullptr) == "/lib/profagent_python");
  CHECK(python_path_with("/lib/profagent_python", "") == "/lib/profagent_python:");
  CHECK(python_path_with("/lib/profagent_python", "/a:/b") == "/lib/profagent_python:/a:/b");
}
