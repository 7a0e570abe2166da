#!/usr/bin/env python3
"""What a release binary is made of: its code and read-only data summed by the crate each
symbol belongs to, from the symbol table of its debug file (`scripts/release.sh` writes
`swerve-<version>-<triple>.debug` beside the stripped binary), as `cargo bloat --crates`
counts them, and the binary's sections.

Usage: scripts/size-by-crate.py DEBUG_FILE [BINARY] [--top N]

A symbol is counted for the first path segment of its demangled name (`regex_automata::…`,
`<serde_json::de::Deserializer<R> as …>::…` → `serde_json`). Generic code lands where it is
instantiated only as far as its name says so: `core::ptr::drop_in_place<swerve_core::…>`
counts for `core`, which is why `core`, `alloc` and `std` are large. Symbols with no path
(C code: zstd, libgit2, the C runtime) count as `[C]`. Needs `nm` and `size` (binutils).
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys

SEGMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")


def crate_of(name: str) -> str:
    """The crate a demangled symbol name belongs to (see the module's text)."""
    name = name.lstrip("<&*(").removeprefix("dyn ").removeprefix("mut ")
    match = SEGMENT.match(name)
    if match is None or not name[match.end() :].startswith("::"):
        return "[C]"
    return match.group(0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("debug_file")
    parser.add_argument("binary", nargs="?")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()

    listed = subprocess.run(
        ["nm", "--print-size", "--demangle", "--defined-only", args.debug_file],
        capture_output=True,
        text=True,
    )
    if listed.returncode != 0:
        print(f"size-by-crate: nm {args.debug_file}: {listed.stderr.strip()}", file=sys.stderr)
        return 1
    sizes: collections.Counter[str] = collections.Counter()
    for line in listed.stdout.splitlines():
        parts = line.split(" ", 3)
        # address, size, kind, name: code (t/T/w/W) and read-only data (r/R).
        if len(parts) != 4 or parts[2] not in "tTwWrR":
            continue
        sizes[crate_of(parts[3])] += int(parts[1], 16)
    total = sum(sizes.values())
    if total == 0:
        print(f"size-by-crate: {args.debug_file} has no sized symbols (is it the debug file?)", file=sys.stderr)
        return 1
    print(f"{'crate':<28}{'bytes':>12}{'share':>8}")
    for crate, size in sizes.most_common(args.top):
        print(f"{crate:<28}{size:>12,}{size / total:>8.1%}")
    rest = total - sum(size for _, size in sizes.most_common(args.top))
    print(f"{f'{max(len(sizes) - args.top, 0)} others':<28}{rest:>12,}{rest / total:>8.1%}")
    print(f"{'symbols in all':<28}{total:>12,}")
    if args.binary:
        sections = subprocess.run(["size", "-A", args.binary], capture_output=True, text=True, check=True)
        print(f"\nsections of {args.binary} over 100 kB:")
        for line in sections.stdout.splitlines():
            fields = line.split()
            if len(fields) >= 2 and fields[1].isdigit() and int(fields[1]) > 100_000:
                print(f"  {fields[0]:<24}{int(fields[1]):>12,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
