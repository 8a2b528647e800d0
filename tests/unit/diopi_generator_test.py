#!/usr/bin/python3
"""The DIOPI wrapper generator on hostile headers: declarations hidden in comments and macros,
line breaks and comments inside parameter lists, unnamed and array parameters, by-value
structs, float/double mixed with integers, 25 parameters; runtime and info functions left
alone; unparseable declarations reported one line each and skipped, never guessed.

    diopi_generator_test.py path/to/gen_diopi_wrappers.py
"""
import os
import re
import subprocess
import sys
import tempfile

TYPES = r"""
#pragma once
#include <stdint.h>
#define DIOPI_API __attribute__((weak))
#define DIOPI_RT_API
typedef enum { diopiSuccess = 0, diopiNoImplement = 13 } diopiError_t;
typedef enum { kHalf = 3, kFloat, kDouble = 0x10 } diopiDtype_t;
typedef enum { ReductionNone, ReductionMean } diopiReduction_t;
struct diopiContext; struct diopiTensor;
typedef struct diopiContext* diopiContextHandle_t;
typedef struct diopiTensor* diopiTensorHandle_t;
typedef const struct diopiTensor* diopiConstTensorHandle_t;
typedef struct diopiSize { const int64_t* data; int64_t len; } diopiSize_t;
typedef struct diopiScalar { diopiDtype_t stype; union { double fval; int64_t ival; }; } diopiScalar_t;
DIOPI_RT_API diopiError_t diopiGetTensorShape(diopiConstTensorHandle_t th, diopiSize_t* size);
"""

OPS = r"""
#include "hostile/types.h"
/* DIOPI_API diopiError_t diopiInBlockComment(diopiContextHandle_t ctx); */
// DIOPI_API diopiError_t diopiInLineComment(diopiContextHandle_t ctx);
#define DECLARE_IN_MACRO \
    DIOPI_API diopiError_t diopiInMacro(diopiContextHandle_t ctx);
DIOPI_API const char* diopiGetVendorName();
DIOPI_API diopiError_t diopiGetStreamLike(diopiContextHandle_t ctx, void** stream);
DIOPI_API diopiError_t diopiNoContext(diopiTensorHandle_t out);
DIOPI_API diopiError_t diopiSplit(diopiContextHandle_t ctx,   // trailing comment
                                  diopiTensorHandle_t out, /* inner comment, with a comma */
                                  const diopiSize_t size,
                                  float alpha, double beta, int64_t n, bool flag);
DIOPI_API diopiError_t
    diopiUnnamed(diopiContextHandle_t, diopiConstTensorHandle_t, diopiSize_t, const float, unsigned int);
DIOPI_API diopiError_t diopiArray(diopiContextHandle_t ctx, int64_t dims[], diopiConstTensorHandle_t* list,
                                  int64_t count, const diopiScalar_t* scalar, const char* mode);
DIOPI_API diopiError_t diopiTwentyFive(diopiContextHandle_t ctx, diopiSize_t s1, diopiSize_t s2,
    diopiSize_t s3, diopiSize_t s4, diopiSize_t s5, float f1, double d1, float f2, double d2,
    float f3, double d3, float f4, double d4, float f5, int64_t i1, int64_t i2, int64_t i3,
    int64_t i4, int64_t i5, bool b1, diopiReduction_t r, diopiTensorHandle_t out,
    diopiConstTensorHandle_t in1, diopiConstTensorHandle_t in2);
DIOPI_API diopiError_t diopiFnPointer(diopiContextHandle_t ctx, void (*callback)(int));
DIOPI_API diopiError_t diopiUnknownByValue(diopiContextHandle_t ctx, mystery_t value);
DIOPI_API diopiError_t diopiVariadic(diopiContextHandle_t ctx, ...);
DIOPI_API diopiError_t diopiMacroParam(diopiContextHandle_t ctx, SIZE_ARG(x));
"""

WRAPPED = {"diopiSplit", "diopiUnnamed", "diopiArray", "diopiTwentyFive"}
SKIPPED = {"diopiFnPointer", "diopiUnknownByValue", "diopiVariadic", "diopiMacroParam"}


def fail(message):
    print("FAILED:", message)
    sys.exit(1)


def main(generator):
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "hostile")
        os.makedirs(folder)
        for name, text in (("types.h", TYPES), ("ops.h", OPS)):
            with open(os.path.join(folder, name), "w") as f:
                f.write(text)
        output = os.path.join(tmp, "out", "wrappers.cpp")
        run = subprocess.run([sys.executable, generator, "--headers", folder, "--output", output],
                             capture_output=True, text=True)
        if run.returncode != 0:
            fail(f"generator exited {run.returncode}: {run.stderr}")
        code = open(output).read()
    wrapped = set(re.findall(r"^diopiError_t wrap_(\w+)\(", code, re.M))
    if wrapped != WRAPPED:
        fail(f"wrapped {sorted(wrapped)}, expected {sorted(WRAPPED)}")
    reported = re.findall(r"^gen_diopi_wrappers: skipped (\w+): .+$", run.stderr, re.M)
    if sorted(reported) != sorted(SKIPPED) or len(run.stderr.strip().splitlines()) != len(SKIPPED):
        fail(f"reported {reported} (stderr {run.stderr!r}), expected one line each for {sorted(SKIPPED)}")
    expect_in(code, "diopiError_t wrap_diopiSplit(diopiContextHandle_t a0, diopiTensorHandle_t a1, "
                    "const diopiSize_t a2, float a3, double a4, int64_t a5, bool a6)")
    expect_in(code, "wrap_diopiUnnamed(diopiContextHandle_t a0, diopiConstTensorHandle_t a1, diopiSize_t a2, "
                    "const float a3, unsigned int a4)")
    expect_in(code, "wrap_diopiArray(diopiContextHandle_t a0, int64_t* a1, diopiConstTensorHandle_t* a2, "
                    "int64_t a3, const diopiScalar_t* a4, const char* a5)")
    twenty_five = re.search(r"wrap_diopiTwentyFive\(([^)]*)\)", code).group(1)
    if twenty_five.count(",") != 24:
        fail(f"diopiTwentyFive has {twenty_five.count(',') + 1} parameters in its wrapper")
    expect_in(code, "return real(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, "
                    "a17, a18, a19, a20, a21, a22, a23, a24);")
    # Shapes: tensors by their handles, everything else by its type label.
    split = code[code.index("wrap_diopiSplit("):code.index("wrap_diopiTwentyFive(")]
    if split.count("shapes.tensor(") != 1 or split.count("shapes.other(") != 5:
        fail("diopiSplit should record one tensor and five other arguments")
    dtypes = re.search(r"kDtypeNames\[\] = \{(.*?)\};", code, re.S).group(1)
    if [s.strip().strip('",') for s in dtypes.split("\n") if s.strip()][:5] != ["", "", "", "kHalf", "kFloat"]:
        fail(f"dtype table from the enum values is wrong: {dtypes!r}")
    print(f"passed: {len(wrapped)} wrapped, {len(reported)} reported and skipped")


def expect_in(code, text):
    if text not in code:
        fail(f"generated code lacks: {text}")


if __name__ == "__main__":
    main(sys.argv[1])
