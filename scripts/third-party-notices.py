#!/usr/bin/env python3
"""THIRD-PARTY-NOTICES.md: every crate the shipped artifacts link (the `swerve` binary and
the Python extension; build and dev dependencies left out), its licence as its manifest
states it, and the licence texts its package carries, identical texts printed once.

    scripts/third-party-notices.py [OUT]     (default: standard output)

Reads `cargo metadata` (offline when the registry cache has everything).
"""

import collections
import json
import os
import subprocess
import sys

SHIPPED = ("swerve", "swerve-python")
TARGET = "x86_64-unknown-linux-gnu"
LICENCE_FILES = ("LICENSE", "LICENCE", "COPYING", "NOTICE", "UNLICENSE", "COPYRIGHT")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    metadata = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--filter-platform", TARGET],
        cwd=root, check=True, capture_output=True, text=True).stdout)
    packages = {p["id"]: p for p in metadata["packages"]}
    members = set(metadata["workspace_members"])
    nodes = {n["id"]: n for n in metadata["resolve"]["nodes"]}
    start = [p["id"] for p in metadata["packages"] if p["id"] in members and p["name"] in SHIPPED]
    linked, queue = set(), list(start)
    while queue:
        node = nodes[queue.pop()]
        for dep in node["deps"]:
            kinds = {k["kind"] for k in dep["dep_kinds"]}
            if kinds - {"dev", "build"} and dep["pkg"] not in linked:
                linked.add(dep["pkg"])
                queue.append(dep["pkg"])
    third = sorted((packages[i] for i in linked if i not in members),
                   key=lambda p: (p["name"], p["version"]))
    texts = collections.OrderedDict()  # text -> crates carrying it
    lines = ["# Third-party notices", "",
             f"The `swerve` binary and the Python extension link these {len(third)} crates "
             "(as `cargo metadata` resolves them for x86_64 Linux). Their licences, as each "
             "manifest states them:", "", "| crate | version | licence |", "|---|---|---|"]
    for package in third:
        lines.append(f"| {package['name']} | {package['version']} | "
                     f"{package.get('license') or 'see its licence file'} |")
        directory = os.path.dirname(package["manifest_path"])
        for name in sorted(os.listdir(directory)):
            if name.upper().startswith(LICENCE_FILES) and os.path.isfile(os.path.join(directory, name)):
                with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as file:
                    texts.setdefault(file.read().strip(), []).append(
                        f"{package['name']} {package['version']} ({name})")
    lines += ["", "## Licence texts", "",
              "Each text once, with the crates whose packages carry it."]
    for text, carriers in texts.items():
        lines += ["", "### " + ", ".join(carriers[:6]) +
                  (f" and {len(carriers) - 6} more" if len(carriers) > 6 else ""), "", "```", text, "```"]
    document = "\n".join(lines) + "\n"
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as file:
            file.write(document)
    else:
        sys.stdout.write(document)


if __name__ == "__main__":
    main()
