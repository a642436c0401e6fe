#!/usr/bin/env python3
"""Usage: scripts/release-objects.py BIN_PATH

Removes the Swift objects under BIN_PATH (a release build's folder) that were compiled without
-function-sections, so that the next `swift build` with the Makefile's RELEASE flags writes them
anew; says how many it removed. `make release` runs it first.

Why: a module compiled with several threads keeps a file's old object when the code it generates
hashes the same (the hash is in the object's .swift_modhash section), and the hash leaves out
-function-sections. An object a plain `swift build -c release` wrote stays in the release folder
through every later build with the RELEASE flags until its source changes, and its code is one
.text section that the console's layout (scripts/console-order.sh) can only place whole. Seen
2026-12-03: 5.4 MB of the console's start lay in such sections (4.1 MB of code ran when rebuilt)
and its peak RSS was 12.5 MB instead of 10. Passing -disable-incremental-llvm-codegen instead
would write every object anew on each build (the OpenAPI generator, rebuilt by each of the four
`swift build`s of `make bench`, took some 5 minutes each so).

How: compiled with -function-sections, every function is in a section of its own and an object's
.text is empty; code in .text means the object was compiled without. Read from the ELF section
headers, a few thousand objects in well under a second.
"""
import glob
import os
import struct
import sys


def text_size(path):
    """The size of the object's .text section (0 if it has none)."""
    with open(path, "rb") as file:
        header = file.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2:
            return 0
        shoff, = struct.unpack_from("<Q", header, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", header, 0x3A)
        file.seek(shoff)
        first = file.read(shentsize)
        # More than 0xff00 sections (a file's functions each in one): the count is in the first
        # section header's size, the names' section in its link.
        if shnum == 0:
            shnum, = struct.unpack_from("<Q", first, 0x20)
        if shstrndx == 0xFFFF:
            shstrndx, = struct.unpack_from("<I", first, 0x28)
        file.seek(shoff)
        table = file.read(shentsize * shnum)
        names_offset, = struct.unpack_from("<Q", table, shstrndx * shentsize + 0x18)
        names_size, = struct.unpack_from("<Q", table, shstrndx * shentsize + 0x20)
        file.seek(names_offset)
        names = file.read(names_size)
        for index in range(shnum):
            name, = struct.unpack_from("<I", table, index * shentsize)
            if names[name:names.index(b"\0", name)] == b".text":
                size, = struct.unpack_from("<Q", table, index * shentsize + 0x20)
                return size
    return 0


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.splitlines()[0])
    objects = sorted(glob.glob(os.path.join(sys.argv[1], "*.build", "*.swift.o")))
    stale = [path for path in objects if text_size(path) > 0]
    for path in stale:
        os.remove(path)
    if stale:
        modules = sorted({os.path.basename(os.path.dirname(path)).removesuffix(".build") for path in stale})
        print(f"release-objects: removed {len(stale)} of {len(objects)} objects compiled without -function-sections"
              f" (in {len(modules)} module{'' if len(modules) == 1 else 's'}: {', '.join(modules[:6])}{', …' if len(modules) > 6 else ''});"
              " the build writes them anew")


if __name__ == "__main__":
    main()
