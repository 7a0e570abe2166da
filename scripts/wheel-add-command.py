#!/usr/bin/env python3
"""Puts the `swerve` command into a wheel, as ruff's and uv's wheels carry theirs: the file
goes to `<name>-<version>.data/scripts/swerve`, which pip installs beside the interpreter
(`venv/bin/swerve`), and the wheel's RECORD gets its hash and size.

    scripts/wheel-add-command.py WHEEL BINARY

The wheel is rewritten in place (a new file renamed over it). Standard library only.
"""

import base64
import hashlib
import os
import sys
import tempfile
import zipfile


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: wheel-add-command.py WHEEL BINARY")
    wheel, binary = sys.argv[1:]
    with open(binary, "rb") as file:
        command = file.read()
    with zipfile.ZipFile(wheel) as source:
        names = source.namelist()
        dist_info = next((n.split("/")[0] for n in names if n.endswith(".dist-info/RECORD")), None)
        if dist_info is None:
            sys.exit(f"{wheel}: not a wheel (no *.dist-info/RECORD)")
        data_dir = dist_info[: -len(".dist-info")] + ".data"
        target = f"{data_dir}/scripts/swerve"
        if target in names:
            sys.exit(f"{wheel}: already holds {target}")
        record_name = f"{dist_info}/RECORD"
        fd, temp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(wheel)), suffix=".whl")
        os.close(fd)
        try:
            with zipfile.ZipFile(temp, "w", zipfile.ZIP_DEFLATED) as out:
                for info in source.infolist():
                    if info.filename != record_name:
                        out.writestr(info, source.read(info))
                entry = zipfile.ZipInfo(target, date_time=(2026, 1, 1, 0, 0, 0))
                entry.external_attr = (0o100755 << 16)
                entry.compress_type = zipfile.ZIP_DEFLATED
                out.writestr(entry, command)
                record = source.read(record_name).decode().rstrip("\n").split("\n")
                record.insert(len(record) - 1, record_line(target, command))
                out.writestr(source.getinfo(record_name), "\n".join(record) + "\n")
            os.replace(temp, wheel)
        except BaseException:
            os.unlink(temp)
            raise


if __name__ == "__main__":
    main()
