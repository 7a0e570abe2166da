#!/usr/bin/env python3
"""Finishes a wheel built by maturin for release: puts the `swerve` command into it, as ruff's
and uv's wheels carry theirs, and, with --strip-extension, moves the extension module's debug
information out of it, as the tarball's binary has it.

    scripts/finish-wheel.py WHEEL BINARY [--strip-extension DEBUG_FILE]

The command goes to `<name>-<version>.data/scripts/swerve`, which pip installs beside the
interpreter (`venv/bin/swerve`). With --strip-extension, the extension (`*.so`) keeps only what
loading it needs (`objcopy --strip-unneeded`: its dynamic symbols stay, the static symbol table
and the DWARF sections go), with a `.gnu_debuglink` to DEBUG_FILE, which receives the debug
information (`objcopy --only-keep-debug`). maturin's own `--strip` would instead build every
dependency again with `-C strip=symbols`, not sharing the binary's build. The wheel's RECORD
gets the new files' hashes and sizes; the wheel is rewritten in place (a new file renamed over
it). Needs only the standard library, and binutils' objcopy for --strip-extension.
"""

import argparse
import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def stripped(extension, debug_file):
    """The extension without its debug information, which is written to debug_file."""
    with tempfile.TemporaryDirectory() as scratch:
        full = os.path.join(scratch, "extension.so")
        small = os.path.join(scratch, "stripped.so")
        with open(full, "wb") as file:
            file.write(extension)
        subprocess.run(["objcopy", "--only-keep-debug", full, debug_file], check=True)
        subprocess.run(
            ["objcopy", "--strip-unneeded", f"--add-gnu-debuglink={debug_file}", full, small],
            check=True,
        )
        with open(small, "rb") as file:
            return file.read()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel")
    parser.add_argument("binary", help="the swerve command to put into the wheel")
    parser.add_argument("--strip-extension", metavar="DEBUG_FILE",
                        help="move the extension's debug information to this file")
    args = parser.parse_args()
    with open(args.binary, "rb") as file:
        command = file.read()
    with zipfile.ZipFile(args.wheel) as source:
        names = source.namelist()
        dist_info = next((n.split("/")[0] for n in names if n.endswith(".dist-info/RECORD")), None)
        if dist_info is None:
            sys.exit(f"{args.wheel}: not a wheel (no *.dist-info/RECORD)")
        data_dir = dist_info[: -len(".dist-info")] + ".data"
        target = f"{data_dir}/scripts/swerve"
        if target in names:
            sys.exit(f"{args.wheel}: already holds {target}")
        extensions = [n for n in names if n.endswith(".so")]
        if args.strip_extension and len(extensions) != 1:
            sys.exit(f"{args.wheel}: --strip-extension wants one extension module, found {extensions}")
        record_name = f"{dist_info}/RECORD"
        replaced = {}
        if args.strip_extension:
            replaced[extensions[0]] = stripped(source.read(extensions[0]), args.strip_extension)
        fd, temp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(args.wheel)), suffix=".whl")
        os.close(fd)
        try:
            with zipfile.ZipFile(temp, "w", zipfile.ZIP_DEFLATED) as out:
                for info in source.infolist():
                    if info.filename != record_name:
                        out.writestr(info, replaced.get(info.filename) or source.read(info))
                entry = zipfile.ZipInfo(target, date_time=(2026, 1, 1, 0, 0, 0))
                entry.external_attr = (0o100755 << 16)
                entry.compress_type = zipfile.ZIP_DEFLATED
                out.writestr(entry, command)
                record = [
                    record_line(line.split(",")[0], replaced[line.split(",")[0]])
                    if line.split(",")[0] in replaced else line
                    for line in source.read(record_name).decode().rstrip("\n").split("\n")
                ]
                record.insert(len(record) - 1, record_line(target, command))
                out.writestr(source.getinfo(record_name), "\n".join(record) + "\n")
            os.replace(temp, args.wheel)
        except BaseException:
            os.unlink(temp)
            raise


if __name__ == "__main__":
    main()
