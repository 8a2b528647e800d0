"""Reading the CUDA runtime headers, for the build-time generators that need the runtime's
functions: scripts/gen_cudart_unmodelled.py (devsim's stubs) and
scripts/gen_cudart_stream_variants.py (the agent's per-thread default stream hooks).

* declarations(path): name -> (return type, parameter text) of every
  `extern ... CUDARTAPI name(...);` in a header, default arguments removed.
* stream_variants(paths): name -> its per-thread default stream variants (`_ptsz`, `_ptds`).
* split_params / parameter_name: a parameter list's parts and their names.

Only the Python standard library is used.
"""
import re

RUNTIME_HEADER = "cuda_runtime_api.h"
VARIANT_SUFFIX = re.compile(r"_(ptsz|ptds)$")
# cuda_runtime_api.h: `#define cudaMemcpyAsync __CUDART_API_PTSZ(cudaMemcpyAsync)`.
VARIANT_MACRO = re.compile(r"#\s*define\s+(\w+)\s+__CUDART_API_(PTSZ|PTDS)\(\s*(\w+)\s*\)")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def read(path):
    return open(path, encoding="utf-8", errors="replace").read()


def balanced_end(text, open_index):
    """Index just past the parenthesis that closes the one at open_index."""
    depth = 0
    for i in range(open_index, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    raise ValueError("unbalanced parentheses")


def remove_default_args(params):
    """Drops the header's __dv(value) default-argument markers (plain `= value` is cut later)."""
    while True:
        start = params.find("__dv(")
        if start < 0:
            return params
        params = params[:start] + params[balanced_end(params, start + 4):]


def split_params(params):
    """Top-level comma split of a parameter list."""
    parts, depth, current = [], 0, ""
    for ch in params:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return [] if parts == ["void"] else parts


def parameter_name(param):
    pointer = re.search(r"\(\s*\*\s*(\w+)\s*\)", param)
    if pointer:
        return pointer.group(1)
    match = re.search(r"(\w+)\s*(\[[^\]]*\])*\s*$", param)
    return match.group(1) if match else ""


def declarations(path):
    """name -> (return type, parameter text) of every `extern ... CUDARTAPI name(...);`."""
    text = strip_comments(read(path))
    found = {}
    for match in re.finditer(r"\bextern\b([^;(){}]*?)\bCUDARTAPI\s+(\w+)\s*\(", text):
        end = balanced_end(text, match.end() - 1)
        if not text[end:].lstrip().startswith(";"):
            continue
        qualifiers = match.group(1).split()
        # Neither __host__-style qualifiers nor the linkage of `extern "C"` are the type.
        return_type = " ".join(word for word in qualifiers if not word.startswith("__") and word != '"C"')
        params = split_params(remove_default_args(text[match.end():end - 1]))
        params = ", ".join(" ".join(p.split("=")[0].split()) for p in params)  # C++ defaults too
        found.setdefault(match.group(2), (return_type, params))
    return found


def legacy_name(name):
    """The function a per-thread default stream variant stands for (other names unchanged)."""
    return VARIANT_SUFFIX.sub("", name)


def stream_variants(paths):
    """name -> sorted variants: the __CUDART_API_PTSZ/PTDS macros of the runtime header, and
    functions declared under a variant's name next to their legacy one (nvcc's private launch
    entry __cudaLaunchKernel_ptsz in crt/device_functions.h)."""
    variants = {}
    for path in paths:
        text = strip_comments(read(path))
        for name, kind, argument in VARIANT_MACRO.findall(text):
            if name == argument:
                variants.setdefault(name, set()).add(f"{name}_{kind.lower()}")
        declared = declarations(path)
        for name in declared:
            if legacy_name(name) != name and legacy_name(name) in declared:
                variants.setdefault(legacy_name(name), set()).add(name)
    return {name: sorted(found) for name, found in variants.items()}
