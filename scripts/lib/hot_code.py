#!/usr/bin/env python3
"""The two steps of scripts/hot-code that are not shell: a profiling link
of the release binary, and the order file written from its profile.

    hot_code.py profile-link LINK-LOG WORK OUT
        Reads the gold command line of the release build's link from
        LINK-LOG (the output of `swift build -v` that relinked the binary),
        copies every object and Swift static library it links into WORK
        with each function section aligned to a page of its own (objcopy),
        and links OUT from the copies, without debug information, with its
        link map in OUT.map.

    hot_code.py order BINARY PAGES OUT
        BINARY is such a profiling binary and PAGES the file offsets (hex,
        one per line) of its pages that a run under scripts/lib/touched-code.c
        touched. Writes OUT: the name of every function section that ran
        (from BINARY.map), in the order of the binary, for gold's
        --section-ordering-file. Code outside sections of its own (the
        Swift runtime's and Foundation's C and C++ parts, some of the
        standard library) cannot be ordered and is left out.

    hot_code.py check BINARY ORDER
        Fails unless the functions ORDER names lie together in BINARY (the
        middle 90% of them within twice their size), as gold puts them when
        it took the order: a toolchain whose names no longer match, or a
        build without the flags, would leave them spread over the binary.

Why a profiling binary: the kernel maps up to 64 KiB of a file around each
page a process touches (fault-around), and in a normal layout a page holds
dozens of functions, so neither a resident page nor a touched one says which
function ran. With every function on pages of its own, a touched page names
exactly one.
"""
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys


def gold_arguments(link_log):
    """The arguments gold got for davgate's link, from `swift build -v`'s output:
    echoed from clang's response file when the command line is long, else
    the command line itself (the manifest's own link is skipped)."""
    lines = open(link_log, encoding="utf-8", errors="replace").read().splitlines()
    for index, line in enumerate(lines):
        if line.strip() == "Arguments passed via response file:" and index + 1 < len(lines):
            arguments = shlex.split(lines[index + 1])
        elif line.lstrip().startswith('"/usr/bin/ld.gold" ') and "@" not in line.split()[1]:
            arguments = shlex.split(line)[1:]
        else:
            continue
        if "-o" in arguments and arguments[arguments.index("-o") + 1].endswith("/davgate"):
            return arguments
    sys.exit(f"hot_code.py: no link of davgate in {link_log}; SwiftPM did not relink it "
             "(remove .build-release/release/davgate and run again)")


def align_copy(source, destination):
    """Copies an object or archive with every .text.* section page-aligned."""
    os.makedirs(os.path.dirname(destination), exist_ok=True)
    subprocess.run(["objcopy", "--set-section-alignment", ".text.*=4096", source, destination], check=True)
    return destination


def profile_link(link_log, work, out):
    arguments = gold_arguments(link_log)
    copies = {}
    rewritten = []
    for argument in arguments:
        if argument.endswith(".o") and os.path.isfile(argument):
            copies[argument] = os.path.join(work, "objects", str(len(copies)) + ".o")
            rewritten.append(copies[argument])
        elif argument.startswith("-L") and "swift_static" in argument:
            # The Swift runtime and Foundation, linked in by -lswiftCore and the rest.
            library_folder = argument[2:]
            aligned_folder = os.path.join(work, "swift_static")
            for name in os.listdir(library_folder):
                if name.endswith(".a"):
                    copies[os.path.join(library_folder, name)] = os.path.join(aligned_folder, name)
            rewritten.append("-L" + aligned_folder)
        elif argument.startswith("--section-ordering-file"):
            continue
        else:
            rewritten.append(argument)
    try:
        output_index = rewritten.index("-o") + 1
    except ValueError:
        sys.exit("hot_code.py: the gold command line has no -o")
    rewritten[output_index] = out
    print(f"hot_code.py: aligning {len(copies)} objects and libraries", file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(lambda pair: align_copy(*pair), copies.items()))
    subprocess.run(["ld.gold", "--strip-debug", "-Map", out + ".map", *rewritten], check=True)
    print(f"hot_code.py: linked {out} ({os.path.getsize(out) // 1048576} MiB)", file=sys.stderr)


def text_section(binary):
    """(virtual address, file offset, size) of .text."""
    out = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+\.text\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m:
            return tuple(int(g, 16) for g in m.groups())
    sys.exit(f"hot_code.py: {binary} has no .text section")


def text_input_sections(link_map):
    """(address, size, name) of every input section gold put in .text, from its -Map."""
    inside, pending = False, None
    with open(link_map, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if not inside:
                inside = line.startswith(".text ")
                continue
            if line.startswith("."):
                return                                  # the next output section
            one_line = re.match(r"^ (\.text\S*)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s", line)
            if one_line:
                yield int(one_line.group(2), 16), int(one_line.group(3), 16), one_line.group(1)
                pending = None
                continue
            name_only = re.match(r"^ (\.text\S*)\s*$", line)
            if name_only:
                pending = name_only.group(1)
                continue
            placed = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+\S", line)
            if placed and pending:
                yield int(placed.group(1), 16), int(placed.group(2), 16), pending
                pending = None


def orderable(section):
    """Whether gold can place a section by its name: not an object's one
    `.text`. Names that many objects share (`.text..Lobjectdestroy`,
    `.text..L__unnamed_1`, `.text.unlikely.`, `.text.startup`) are kept,
    though each brings every object's section of that name along: among
    them are the destroy functions of the classes a server allocates, and
    without them the package binary's code resident after the profile's
    requests was 38.7 MiB instead of 32.1."""
    return section != ".text"


def order(binary, pages_path, out_path):
    address, offset, size = text_section(binary)
    touched = set()
    with open(pages_path) as pages:
        for line in pages:
            file_offset = int(line.split()[0], 16)
            if offset <= file_offset + 4095 and file_offset < offset + size:
                touched.add((file_offset - offset + address) // 4096)
    names, ran_bytes, seen = [], 0, set()
    for start, length, name in sorted(text_input_sections(binary + ".map")):
        if not length or name in seen or not orderable(name):
            continue
        if any(page in touched for page in range(start // 4096, (start + length - 1) // 4096 + 1)):
            seen.add(name)
            names.append(name)
            ran_bytes += length
    if not names:
        sys.exit("hot_code.py: no function of the profile ran; was PAGES taken from this binary?")
    with open(out_path, "w") as out:
        out.write("".join(f"{name}\n" for name in names))
    print(f"hot_code.py: {len(names)} function sections ran, {ran_bytes // 1024} KiB of code "
          f"(.text is {size // 1048576} MiB in the profiling binary)", file=sys.stderr)


def check(binary, order_path):
    wanted = set()
    with open(order_path) as order_file:
        for line in order_file:
            name = line.strip()
            # Sections named after their function; .text.unlikely.* and the like are not.
            if name.startswith(".text.") and not name.startswith((".text.unlikely.", ".text.startup.", ".text.hot.")):
                wanted.add(name[len(".text."):])
    out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    placed = sorted((int(fields[0], 16), int(fields[1], 16))
                    for fields in (line.split() for line in out.splitlines())
                    if len(fields) == 4 and fields[3] in wanted)
    if not wanted or len(placed) < len(wanted) // 2:
        sys.exit(f"hot_code.py: only {len(placed)} of the {len(wanted)} functions of {order_path} are in {binary}; "
                 "run scripts/hot-code to write the order again")
    size = sum(length for _, length in placed)
    skip = len(placed) // 20
    middle = placed[skip:len(placed) - skip]
    span = middle[-1][0] + middle[-1][1] - middle[0][0]
    if span > 2 * size:
        sys.exit(f"hot_code.py: the functions of {order_path} are spread over {span // 1024} KiB of {binary}, "
                 f"not together ({size // 1024} KiB): gold did not take the order (the build's flags, or names "
                 "the toolchain no longer makes; run scripts/hot-code)")
    print(f"hot_code.py: {len(placed)} functions of the order lie together, {span // 1024} KiB for "
          f"{size // 1024} KiB of code", file=sys.stderr)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "profile-link":
        profile_link(*sys.argv[2:5])
    elif len(sys.argv) == 5 and sys.argv[1] == "order":
        order(*sys.argv[2:5])
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        check(*sys.argv[2:4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
