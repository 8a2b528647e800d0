#!/usr/bin/python3
"""Generates the "not modelled" entry points of devsim's libcudart.so.13.

Every name NVIDIA's libcudart.so.13 exports must be exported by devsim's too, or a program that
merely references one dies in the loader. The names devsim does not implement get a stub here:

    gen_cudart_unmodelled.py --nvidia-lib libcudart.so.13 --nm nm --include <cuda/include>
                             --output unmodelled.cpp -- <devsim runtime objects...>

* NVIDIA's names: the dynamic symbols `nm -D --defined-only` lists in the installed library.
* devsim's names: the global functions defined in devsim's own compiled runtime objects, so a
  name somebody implements drops out of the stubs by itself at the next build.
* Signatures: from the declarations in cuda_runtime_api.h, read by scripts/cuda_headers.py (a
  _ptsz/_ptds twin has the signature of its legacy name), so the compiler checks each stub against the real prototype. The
  callback id and parameter struct CUPTI hands to subscribers come from cupti_runtime_cbid.h and
  generated_cuda_runtime_api_meta.h. Interop names (GL, EGL, VDPAU), whose headers need
  platform headers that may be absent, are checked to return cudaError_t and defined without
  parameters: the extra arguments are ignored, which the x86-64 and AArch64 calling conventions
  allow for a function returning an integer.
* A missing name that returns anything but cudaError_t, or whose declaration is not found,
  stops the build: it must be written by hand (an ABI-wrong stub would corrupt its caller).

Only the Python standard library is used.
"""
import argparse
import os
import re
import subprocess
import sys

from cuda_headers import RUNTIME_HEADER, declarations, legacy_name, parameter_name, split_params

INTEROP_HEADERS = ("cuda_gl_interop.h", "cuda_egl_interop.h", "cuda_vdpau_interop.h")


def run_nm(nm, args):
    out = subprocess.run([nm] + args, check=True, capture_output=True, text=True).stdout
    return out.splitlines()


def nvidia_names(nm, library):
    """Defined dynamic symbols of NVIDIA's library with their version node."""
    names = {}
    for line in run_nm(nm, ["-D", "--defined-only", library]):
        parts = line.split()
        if len(parts) == 3 and parts[1] == "T" and "@@" in parts[2]:
            name, node = parts[2].split("@@", 1)
            names[name] = node
    if not names:
        sys.exit(f"gen_cudart_unmodelled: no exported functions found in {library}")
    return names


def defined_names(nm, objects):
    """Global functions (and data) devsim's runtime objects define."""
    names = set()
    for line in run_nm(nm, ["--defined-only", "--extern-only"] + objects):
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRW":
            names.add(parts[2])
    return names


def callback_ids(include):
    """name -> (highest API version, CUPTI_RUNTIME_TRACE_CBID_* spelling)."""
    text = open(os.path.join(include, "cupti_runtime_cbid.h"), encoding="utf-8").read()
    ids = {}
    for match in re.finditer(r"\bCUPTI_RUNTIME_TRACE_CBID_(\w+)_v(\d+)\s*=", text):
        name, version = match.group(1), int(match.group(2))
        if name not in ids or version > ids[name][0]:
            ids[name] = (version, f"CUPTI_RUNTIME_TRACE_CBID_{name}_v{version}")
    return ids


def param_structs(include):
    """params struct name -> its field names, from generated_cuda_runtime_api_meta.h."""
    text = open(os.path.join(include, "generated_cuda_runtime_api_meta.h"), encoding="utf-8").read()
    structs = {}
    for match in re.finditer(r"typedef struct (\w+)_st \{(.*?)\} \1;", text, flags=re.S):
        fields = [field.strip() for field in match.group(2).split(";") if field.strip()]
        structs[match.group(1)] = [parameter_name(field) for field in fields]
    return structs


class Stub:
    def __init__(self, name, signature, cbid, params_struct):
        self.name = name
        self.signature = signature  # parameter text, or None: defined without parameters
        self.cbid = cbid
        self.params_struct = params_struct

    def render(self):
        params = "" if self.signature is None else self.signature
        lines = [f'extern "C" cudaError_t CUDARTAPI {self.name}({params}) {{',
                 "  static std::atomic<bool> said{false};"]
        if self.params_struct:
            names = ", ".join(parameter_name(p) for p in split_params(self.signature))
            lines.append(f"  {self.params_struct} params{{{names}}};")
            pointer = "&params"
        else:
            pointer = "nullptr"
        lines.append(f'  return devsim::rt::not_modelled({self.cbid}, "{self.name}", {pointer}, said);')
        lines.append("}")
        return "\n".join(lines)


def make_stub(name, runtime_decls, interop_decls, cbids, structs):
    legacy = legacy_name(name)
    decl = runtime_decls.get(name) or runtime_decls.get(legacy)
    signature = None
    if decl:
        return_type, signature = decl
    elif name in interop_decls:
        return_type = interop_decls[name][0]
    else:
        return None, f"{name}: no declaration found; write it by hand"
    if return_type != "cudaError_t":
        return None, f"{name}: returns '{return_type}', not cudaError_t; write it by hand"
    version, cbid = cbids.get(name, (None, "CUPTI_RUNTIME_TRACE_CBID_INVALID"))
    struct = f"{name}_v{version}_params" if version else None
    # The parameter struct is filled positionally: only when its fields are the parameters.
    if signature is None or struct not in structs or structs[struct] != [
            parameter_name(p) for p in split_params(signature)]:
        struct = None
    return Stub(name, signature, cbid, struct), None


HEADER = """\
// Generated by scripts/gen_cudart_unmodelled.py at build time. Do not edit.
// The names NVIDIA's libcudart.so.13 exports that devsim's runtime objects do not define: each
// is reported like any call and returns cudaErrorNotSupported (cudart_unmodelled.cpp).
#include <atomic>

#include "cudart_unmodelled.h"
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nvidia-lib", required=True)
    parser.add_argument("--nm", required=True)
    parser.add_argument("--include", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("objects", nargs="+")
    options = parser.parse_args()

    wanted = nvidia_names(options.nm, options.nvidia_lib)
    have = defined_names(options.nm, options.objects)
    runtime_decls = declarations(os.path.join(options.include, RUNTIME_HEADER))
    interop_decls = {}
    for header in INTEROP_HEADERS:
        path = os.path.join(options.include, header)
        if os.path.exists(path):
            interop_decls.update(declarations(path))
    cbids, structs = callback_ids(options.include), param_structs(options.include)

    stubs, errors = [], []
    for name in sorted(set(wanted) - have):
        stub, error = make_stub(name, runtime_decls, interop_decls, cbids, structs)
        if error:
            errors.append(error)
        else:
            stubs.append(stub)
    if errors:
        sys.exit("gen_cudart_unmodelled:\n  " + "\n  ".join(errors))

    text = HEADER + f"// {len(stubs)} of NVIDIA's {len(wanted)} names.\n\n"
    text += "\n\n".join(stub.render() for stub in stubs) + "\n"
    if not os.path.exists(options.output) or open(options.output).read() != text:
        temporary = f"{options.output}.{os.getpid()}.tmp"
        with open(temporary, "w") as f:
            f.write(text)
        os.replace(temporary, options.output)


if __name__ == "__main__":
    main()
