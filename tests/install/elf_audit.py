"""Audit of an installed profagent tree (the bundle, an install prefix, an unpacked .deb): every
ELF file may only need the system's C and C++ runtimes and the libraries the tree carries; its
RPATH/RUNPATH entries are all $ORIGIN-relative; `ldd` resolves everything, the carried
libraries from inside the tree; no build-tree path is left in what the loader maps. Also the
newest glibc and libstdc++ symbol versions the files need (`objdump -T`), which are the tree's
minimum system versions.

    elf_audit.py TREE [--build-dir DIR]     prints the audit, exit status 1 if it fails

Used by the install tests (tests/install) and by the GPU acceptance script on the GPU machine
(tests/gpu/gpu_check.py), so a bundle is checked the same way where it is built and where it
runs. Standard library plus binutils' readelf/objdump and glibc's ldd.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# What every Linux system has and must provide itself; everything else is carried.
SYSTEM_LIBRARIES = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
                    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "libstdc++.so.6", "libgcc_s.so.1"}
VERSION_REFERENCE = re.compile(r"\b(GLIBC|GLIBCXX|CXXABI|GCC)_([0-9]+(?:\.[0-9]+)*)\b")


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def elf_files(tree):
    found = []
    for directory, _, names in os.walk(tree):
        for name in sorted(names):
            path = os.path.join(directory, name)
            if not os.path.islink(path) and is_elf(path):
                found.append(path)
    return sorted(found)


def dynamic_section(path):
    """NEEDED, RPATH and RUNPATH entries (readelf -d)."""
    text = subprocess.run(["readelf", "-d", "-W", path], capture_output=True, text=True).stdout
    entries = {"NEEDED": [], "RPATH": [], "RUNPATH": []}
    for kind, value in re.findall(r"\((NEEDED|RPATH|RUNPATH)\)\s+[^\[]*\[([^\]]*)\]", text):
        entries[kind].extend(value.split(":") if kind != "NEEDED" else [value])
    return entries


def loaded_bytes(path):
    """The bytes of the sections the loader maps (flag A, not NOBITS): what the program can
    see at run time. Debug sections, which name the build tree in any unstripped build, are
    left out."""
    text = subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True).stdout
    with open(path, "rb") as f:
        data = f.read()
    chunks = []
    for match in re.finditer(r"\]\s+\S+\s+(\S+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+(\S*)", text):
        kind, offset, size, flags = match.groups()
        if "A" in flags and kind != "NOBITS":
            chunks.append(data[int(offset, 16):int(offset, 16) + int(size, 16)])
    return b"".join(chunks)


def version_key(text):
    return tuple(int(part) for part in text.split("."))


def needed_versions(path):
    """The newest version of each of glibc, libstdc++ (GLIBCXX, CXXABI) and libgcc_s the file
    references (objdump -T: its undefined dynamic symbols)."""
    text = subprocess.run(["objdump", "-T", path], capture_output=True, text=True).stdout
    newest = {}
    for line in text.splitlines():
        if "*UND*" not in line:
            continue
        for family, number in VERSION_REFERENCE.findall(line):
            if family not in newest or version_key(number) > version_key(newest[family]):
                newest[family] = number
    return newest


def ldd(path):
    """name -> resolved path (or 'not found'), in a clean environment."""
    text = subprocess.run(["ldd", path], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}).stdout
    resolved = {}
    for line in text.splitlines():
        match = re.match(r"\s*(\S+) => (not found|\S+)", line)
        if match:
            resolved[match.group(1)] = match.group(2)
    return resolved


class Audit:
    def __init__(self, tree, build_dir=None):
        self.tree = os.path.realpath(tree)
        self.build_dir = os.path.realpath(build_dir) if build_dir else None
        self.problems, self.files, self.newest = [], {}, {}
        carried_dir = os.path.join(self.tree, "lib", "profagent")
        self.carried = set(os.listdir(carried_dir)) if os.path.isdir(carried_dir) else set()

    def run(self):
        for tool in ("readelf", "objdump", "ldd"):
            if shutil.which(tool) is None:
                self.problems.append(f"{tool} is not installed: the audit cannot run")
                return self
        files = elf_files(self.tree)
        if not files:
            self.problems.append(f"no ELF file under {self.tree}")
        for path in files:
            self.check_file(path)
        return self

    def check_file(self, path):
        name = os.path.relpath(path, self.tree)
        entries = dynamic_section(path)
        self.files[name] = entries
        for needed in entries["NEEDED"]:
            if needed not in SYSTEM_LIBRARIES and needed not in self.carried:
                self.problems.append(f"{name} needs {needed}, neither a system library nor carried")
        for entry in entries["RPATH"] + entries["RUNPATH"]:
            if entry and not entry.startswith("$ORIGIN"):
                self.problems.append(f"{name} has the search path {entry!r}, not relative to $ORIGIN")
        # A carried library is only ever reached through a helper or the launcher, whose search
        # path (and, for DT_RPATH, the loader's chain of it) finds its dependencies beside it:
        # `ldd` of the entry points shows them resolved; `ldd` of the library alone cannot.
        if os.path.dirname(path) == os.path.join(self.tree, "lib", "profagent"):
            return self.check_versions(name, path)
        for needed, where in ldd(path).items():
            if where == "not found":
                self.problems.append(f"{name}: ldd cannot find {needed}")
            elif needed in self.carried and not os.path.realpath(where).startswith(self.tree + os.sep):
                self.problems.append(f"{name}: {needed} resolves to {where}, outside the tree")
        self.check_versions(name, path)

    def check_versions(self, name, path):
        if self.build_dir and self.build_dir.encode() in loaded_bytes(path):
            self.problems.append(f"{name} holds the build tree's path {self.build_dir} in a loaded section")
        for family, number in needed_versions(path).items():
            if family not in self.newest or version_key(number) > version_key(self.newest[family][0]):
                self.newest[family] = (number, name)

    def minimums(self):
        """'GLIBC 2.34 (lib/x), GLIBCXX 3.4.30 (bin/profagent), ...'"""
        return ", ".join(f"{family} {number} ({where})" for family, (number, where) in sorted(self.newest.items()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree")
    parser.add_argument("--build-dir")
    options = parser.parse_args()
    audit = Audit(options.tree, options.build_dir).run()
    for name, entries in sorted(audit.files.items()):
        print(f"{name}: NEEDED {' '.join(entries['NEEDED'])}; RPATH {':'.join(entries['RPATH']) or '-'}; "
              f"RUNPATH {':'.join(entries['RUNPATH']) or '-'}")
    print(f"carried: {' '.join(sorted(audit.carried)) or 'nothing'}")
    print(f"minimum system versions: {audit.minimums()}")
    for problem in audit.problems:
        print(f"problem: {problem}")
    print(("passed" if not audit.problems else "FAILED") + f": {len(audit.files)} ELF files audited")
    return 0 if not audit.problems else 1


if __name__ == "__main__":
    sys.exit(main())
