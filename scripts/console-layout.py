#!/usr/bin/env python3
"""Usage: scripts/console-layout.py MAP CALLGRIND BINARY OUT

Writes OUT, a linker script for lld that puts every code section a profiled run of the console
touched into one output section (.text.start) ahead of the rest of its code. scripts/console-order.sh
runs it; `make release` relinks the console with OUT (SAVEDESK_CONSOLE_LAYOUT).

MAP is lld's map of the profiled console's link (SAVEDESK_CONSOLE_MAP), CALLGRIND its run under
Valgrind's callgrind with --dump-instr=yes --compress-pos=no, BINARY the file that ran (its name in
callgrind's "ob=" lines). Each instruction address the run executed is looked up in the map: the
input section it lies in, named by its object file (an archive's member as archive:member) and its
section, in the order the run first reached it.

Sections, not symbols: a private function has no symbol (".L__unnamed_3"), and a local name such as
"objectdestroy.2Tm" is in hundreds of objects; an order by symbol name cannot place the first and
moved every section of the second, whole runtime libraries with it.
"""
import bisect
import re
import sys

MAP_LINE = re.compile(r"\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+ (.*)$")
# An object SwiftPM compiled for this build (not an archive's member): Sources/X.swift → X.swift.o.
BUILT = re.compile(r"\.(swift|c|cpp)\.o$")
# glibc's string functions come in one member per CPU variant (strlen-avx2.o, strlen-evex.o), picked
# when the program starts; under Valgrind it picks others than on the machine. Every variant of a
# family the run used is placed, each a few hundred bytes.
VARIANT = re.compile(r"^([a-z0-9_]+)-(sse2|sse4|ssse3|avx|avx2|evex|avx512|evex512)\b")


def code_sections(map_path):
    """The input sections of the output section .text: (address, size, object, section)."""
    sections, output = [], None
    with open(map_path) as lines:
        for line in lines:
            match = MAP_LINE.match(line.rstrip("\n"))
            if not match:
                continue
            address, size, rest = int(match.group(1), 16), int(match.group(2), 16), match.group(3)
            if not rest.startswith(" "):
                output = rest.strip()
            elif output == ".text" and rest.startswith(" " * 8) and not rest.startswith(" " * 16) and size > 0:
                source, _, section = rest.strip().rpartition(":(")
                sections.append((address, size, source, section[:-1]))
    sections.sort()
    return sections


def executed(callgrind_path, binary):
    """The instruction addresses of BINARY that ran, in the order callgrind lists them."""
    current = None
    with open(callgrind_path) as lines:
        for line in lines:
            if line.startswith("ob="):
                current = line[3:].strip()
            elif line.startswith("0x") and current == binary:
                yield int(line.split(None, 1)[0], 16)


def pattern(source, section):
    """An input section description that names this object only: lld matches the file pattern
    against the path the link was given, and an archive's member as archive:member."""
    member = re.match(r"(.*)\((.*)\)$", source)
    if member:
        archive, name = member.group(1).rsplit("/", 1)[-1], member.group(2)
        variant = VARIANT.match(name)
        if variant and archive == "libc.a" and section != ".text":
            return f"*{archive}:{variant.group(1)}-*.o(.text.*)"
        return f"*{archive}:{name}({section})"
    # The module's build folder and the file: two modules may both have a Utilities.swift.o.
    return "*/" + "/".join(source.split("/")[-2:]) + f"({section})"


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.splitlines()[0])
    map_path, callgrind_path, binary, out = sys.argv[1:]
    sections = code_sections(map_path)
    starts = [section[0] for section in sections]
    placed, rules, size, whole = set(), [], 0, 0
    for address in executed(callgrind_path, binary):
        index = bisect.bisect_right(starts, address) - 1
        if index < 0 or index in placed:
            continue
        start, length, source, section = sections[index]
        if address >= start + length:
            continue
        placed.add(index)
        size += length
        if section == ".text" and BUILT.search(source):
            whole += length
        rule = pattern(source, section)
        if rule not in rules:
            rules.append(rule)
    if not rules:
        sys.exit(f"console-layout: no code of {binary} in {callgrind_path} is in {map_path}")
    with open(out, "w") as script:
        script.write("/* Made by scripts/console-layout.py from a profiled run; not committed. */\n")
        script.write("SECTIONS {\n  .text.start : {\n")
        script.writelines(f"    {rule}\n" for rule in rules)
        script.write("  }\n} INSERT BEFORE .text;\n")
    print(f"console-layout: {len(placed)} code sections ({size / 1048576:.1f} MB) of {binary} ran")
    if whole:
        # An object of this build compiled with -function-sections has an empty .text: code in it
        # is an object compiled without (Makefile: RELEASE), and lies in the start whole.
        print(f"console-layout: {whole / 1048576:.1f} MB of it in objects of this build whose code is one .text section"
              " (compiled without -function-sections)")


if __name__ == "__main__":
    main()
