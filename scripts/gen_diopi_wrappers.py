#!/usr/bin/env python3
"""Generates profagent's typed DIOPI operator wrappers from a folder of DIOPI-style headers.

    gen_diopi_wrappers.py --headers <dir> --output <file.cpp> [--report <file>]

Every `DIOPI_API diopiError_t diopiX(diopiContextHandle_t ctx, ...);` declaration becomes one
C++ wrapper with exactly the declared parameter types, so the compiler classifies every
argument (by-value diopiSize_t, float/double mixed with integers, 25 parameters, stack-passed
arguments) the way the real operator expects it, on x86-64 and AArch64 alike; a generic
trampoline would have to save every argument register and could read only ctx. The wrappers
and a table (name, wrapper address, slot for the real target) are written to --output;
hooks/diopi/ installs them by GOT patching.

Not wrapped: runtime helpers (diopiGet*, diopiRequire*, diopiRecord*, diopiGenerator*), info
functions (no diopiError_t result or no context first). Declarations the parser cannot read
with certainty (function-pointer or macro-built parameters, unknown by-value types, variadics)
are reported one line each on stderr and skipped, never guessed.

Python 3 standard library only: CMake runs it at build time.
"""
import argparse
import os
import re
import sys

RUNTIME_PREFIXES = ("diopiGet", "diopiRequire", "diopiRecord", "diopiGenerator", "diopiSet")
CONTEXT_TYPE = "diopiContextHandle_t"
TENSOR_TYPES = {"diopiTensorHandle_t", "diopiConstTensorHandle_t"}
BUILTIN_WORDS = {"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
                 "bool", "_Bool", "size_t", "ptrdiff_t", "intptr_t", "uintptr_t"}
STDINT = {f"{p}int{n}_t" for p in ("", "u") for n in (8, 16, 32, 64)}
QUALIFIERS = {"const", "volatile", "struct", "enum"}
# Copies of each wrapper, one per distinct real definition (hooks/diopi/wrapper_support.h).
VARIANTS = 4
TOKEN = re.compile(r"\s*(\w+|\*|\[\s*\w*\s*\]|&)")


class Unparseable(Exception):
    """A declaration this script will not guess about."""


def strip_comments_and_directives(text):
    """Removes comments (keeping string literals intact) and preprocessor lines."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text[i] == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i:end + 1])
            i = end + 1
        else:
            out.append(text[i])
            i += 1
    lines, joined = [], "".join(out).replace("\\\n", " ")
    for line in joined.split("\n"):
        lines.append("" if line.lstrip().startswith("#") else line)
    return "\n".join(lines)


def learn_types(code):
    """Type names the headers define: enums (with their constants), structs, handle typedefs."""
    enums, structs, handles = {}, set(), set()
    for body, name in re.findall(r"typedef\s+enum\b[^{;]*\{([^}]*)\}\s*(\w+)\s*;", code):
        enums[name] = parse_enum_body(body)
    for name in re.findall(r"typedef\s+(?:struct|union)\b[^{;]*\{(?:[^{}]|\{[^{}]*\})*\}\s*(\w+)\s*;", code):
        structs.add(name)
    for name in re.findall(r"typedef\s+[\w\s]*?\*\s*(\w+)\s*;", code):
        handles.add(name)
    return enums, structs, handles


def parse_enum_body(body):
    values, next_value = {}, 0
    for item in body.split(","):
        item = item.strip()
        if not item:
            continue
        name, _, value = (part.strip() for part in item.partition("="))
        if value:
            try:
                next_value = int(value, 0)
            except ValueError:
                next_value = values.get(value, next_value)
        values[name] = next_value
        next_value += 1
    return values


def split_params(text):
    params, depth, current = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            params.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        params.append("".join(current).strip())
    return params


class Param:
    def __init__(self, type_text, base, pointer_depth, name):
        self.type_text, self.base, self.pointer_depth, self.name = type_text, base, pointer_depth, name

    @property
    def is_tensor(self):
        return self.pointer_depth == 0 and self.base in TENSOR_TYPES

    @property
    def label(self):
        """What the trace's "Input type" says for a non-tensor argument."""
        return self.base + "*" * self.pointer_depth


def tokenize(param):
    tokens, pos = [], 0
    while pos < len(param):
        match = TOKEN.match(param, pos)
        if not match:
            if param[pos:].strip() == "":
                break
            raise Unparseable(f"cannot read parameter '{param}'")
        tokens.append(match.group(1))
        pos = match.end()
    return tokens


def parse_param(param, known):
    if "(" in param or ")" in param:
        raise Unparseable(f"function-pointer or macro-built parameter '{param}'")
    if param == "...":
        raise Unparseable("variadic parameter list")
    tokens = tokenize(param)
    words = [t for t in tokens if re.match(r"\w+$", t)]
    name = None
    if len(words) >= 2 and words[-1] == tokens[-1 - count_array_suffix(tokens)] \
            and words[-1] not in BUILTIN_WORDS and words[-1] not in QUALIFIERS \
            and any(w not in QUALIFIERS for w in words[:-1]):
        name = words[-1]
    type_tokens = [t for t in tokens if t != name]
    pointer_depth = sum(1 for t in type_tokens if t == "*" or t.startswith("["))
    bases = [t for t in type_tokens if re.match(r"\w+$", t) and t not in QUALIFIERS]
    if "&" in type_tokens or not bases:
        raise Unparseable(f"cannot read parameter '{param}'")
    base = " ".join(bases)
    if not all(b in BUILTIN_WORDS for b in bases) and (len(bases) != 1 or bases[0] not in known):
        if pointer_depth == 0:
            raise Unparseable(f"unknown type '{base}' passed by value in '{param}'")
        if len(bases) != 1:
            raise Unparseable(f"cannot read parameter '{param}'")
    text = " ".join("*" if t.startswith("[") else t for t in type_tokens)
    return Param(text.replace(" *", "*"), base, pointer_depth, name)


def count_array_suffix(tokens):
    count = 0
    for token in reversed(tokens):
        if not token.startswith("["):
            break
        count += 1
    return count


def parse_declarations(code, known):
    """Yields (name, params) for operators and (name, reason) for skipped declarations."""
    flat = re.sub(r"\s+", " ", code)
    operators, skipped = [], []
    for decl in re.findall(r"\bDIOPI_API\b([^;{}]*);", flat):
        match = re.match(r"\s*diopiError_t\s+(diopi\w+)\s*\((.*)\)\s*$", decl)
        if not match:
            continue  # not an operator (info function such as diopiGetVendorName)
        name, params_text = match.groups()
        if name.startswith(RUNTIME_PREFIXES):
            continue
        try:
            params = [parse_param(p, known) for p in split_params(params_text)]
        except Unparseable as why:
            skipped.append((name, str(why)))
            continue
        if not params or params[0].base != CONTEXT_TYPE or params[0].pointer_depth:
            continue  # operators take the context first; anything else is a runtime function
        operators.append((name, params))
    return operators, skipped


def emit(headers, operators, dtype_names):
    out = ["// Generated by scripts/gen_diopi_wrappers.py — do not edit.",
           "// One typed wrapper per DIOPI operator of: " + ", ".join(headers), ""]
    out += [f'#include "{h}"' for h in headers]
    out += ['#include "hooks/diopi/wrapper_support.h"', "",
            "namespace profagent::hooks::diopi {", "namespace {", ""]
    labels = sorted({p.label for _, params in operators for p in params[1:] if not p.is_tensor})
    for index, (name, params) in enumerate(operators):
        out += emit_wrapper(index, name, params, labels)
    out += [f"static_assert(kRealTargetVariants == {VARIANTS});", "}  // namespace", "",
            "// The only DIOPI layouts wrapper_support.cpp relies on.",
            "static_assert(sizeof(diopiSize_t) == sizeof(SizeView));",
            "static_assert(sizeof(diopiDtype_t) == sizeof(int));", "",
            f"std::atomic<void*> g_real_targets[{max(len(operators), 1)} * kRealTargetVariants];",
            f"std::atomic<NameId> g_operator_names[{max(len(operators), 1)}];",
            f"std::atomic<NameId> g_argument_label_ids[{len(labels) + 1}];",
            f"std::atomic<NameId> g_dtype_ids[{len(dtype_names) + 1}];", ""]
    out.append("extern const WrapperEntry kWrappers[] = {  // sorted by name")
    for index, (name, _) in enumerate(operators):
        variants = ", ".join(f"reinterpret_cast<void*>(&wrap_{name}<{v}>)" for v in range(VARIANTS))
        out.append(f'    {{"{name}", {{{variants}}}, &g_real_targets[{index} * kRealTargetVariants]}},')
    out += ["};", f"extern const size_t kWrapperCount = {len(operators)};", ""]
    out.append("extern const char* const kArgumentLabels[] = {")
    out += [f'    "{label}",' for label in labels] + ["    nullptr};"]
    out.append(f"extern const size_t kArgumentLabelCount = {len(labels)};")
    out.append("extern const char* const kDtypeNames[] = {")
    out += [f'    "{n}",' for n in dtype_names] + ["    nullptr};"]
    out += [f"extern const size_t kDtypeNameCount = {len(dtype_names)};", "",
            "}  // namespace profagent::hooks::diopi", ""]
    return "\n".join(out)


def emit_wrapper(index, name, params, labels):
    args = [f"a{i}" for i in range(len(params))]
    decl = ", ".join(f"{p.type_text} {a}" for p, a in zip(params, args))
    types = ", ".join(p.type_text for p in params)
    call = ", ".join(args)
    recorded = f"diopiError_t record_{name}(diopiError_t (*real)({types}), {decl})"
    # The entry forwards at once when nothing is recorded; a configured step marker
    # (PROFAGENT_STEP_ON=api:<operator>) hears of the call after it returned and after its
    # event was recorded, so the operator belongs to the step it ends.
    lines = ["template <size_t Variant>", recorded + ";", "",
             "template <size_t Variant>",
             f"diopiError_t wrap_{name}({decl}) {{",
             f"  using Real = diopiError_t (*)({types});",
             f"  const auto real = reinterpret_cast<Real>(real_target({index}, Variant));",
             "  if (step_markers_armed()) [[unlikely]] {",
             f"    const diopiError_t result = record_{name}<Variant>(real, {call});",
             f"    operator_ended({index});",
             "    return result;",
             "  }",
             f"  if (!should_record_operator()) return real({call});",
             f"  return record_{name}<Variant>(real, {call});",
             "}", "",
             "template <size_t Variant>",
             recorded + " {",
             f"  if (!should_record_operator()) return real({call});",
             f"  OperatorCall call({index});",
             "  if (call.wants_shapes()) {",
             f"    ShapeWriter shapes;"]
    for p, a in zip(params[1:], args[1:]):
        if p.is_tensor:
            lines.append(f"    shapes.tensor({a});")
        else:
            lines.append(f"    shapes.other({labels.index(p.label)});")
    lines += ["    call.set_shapes(shapes);", "  }",
              f"  const diopiError_t result = real({call});",
              "  call.finish(static_cast<int>(result));",
              "  return result;", "}", ""]
    return lines


def dtype_table(enums):
    values = enums.get("diopiDtype_t", {})
    if not values:
        return []
    table = [""] * (max(values.values()) + 1)
    for constant, value in values.items():
        if 0 <= value < 64:
            table[value] = re.sub(r"^diopi_dtype_", "", constant)
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--headers", required=True, help="folder of DIOPI-style headers")
    parser.add_argument("--output", required=True, help="generated C++ file")
    args = parser.parse_args()
    headers = sorted(os.path.join(root, f) for root, _, files in os.walk(args.headers)
                     for f in files if f.endswith(".h"))
    if not headers:
        sys.exit(f"gen_diopi_wrappers: no headers under {args.headers}")
    code = "\n".join(strip_comments_and_directives(open(h, encoding="utf-8").read()) for h in headers)
    enums, structs, handles = learn_types(code)
    known = BUILTIN_WORDS | STDINT | set(enums) | structs | handles
    operators, skipped = parse_declarations(code, known)
    for name, why in skipped:
        print(f"gen_diopi_wrappers: skipped {name}: {why}", file=sys.stderr)
    operators.sort(key=lambda op: op[0])
    text = emit([os.path.abspath(h) for h in headers], operators, dtype_table(enums))
    write_if_changed(args.output, text)
    print(f"gen_diopi_wrappers: {len(operators)} operators wrapped, {len(skipped)} skipped")


def write_if_changed(path, text):
    if os.path.exists(path) and open(path, encoding="utf-8").read() == text:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
