#!/usr/bin/env python3
"""`swerve images build` beside buildah on the same Dockerfile: the images' file trees and
configs compared, and the build times measured side by side.

    scripts/dockerfile-buildah-compare.py CONTEXT [--rounds N] [--swerve BIN]

For each round, with fresh stores: a cold build by each, then a rebuild after the
Dockerfile's last `RUN` line is changed (a comment appended), so every earlier step is
cached. buildah runs as Debian packages it (`buildah bud --layers --isolation chroot
--storage-driver vfs`: daemonless, as root; its default runtime needs a cgroup layout this
machine may not have). The trees are compared from the images' layer tars (whiteouts
applied): every path's type, mode, owner, size, link target and content hash, modification
times left out; the configs by the fields a Dockerfile sets. Prints a report and exits 1 when
the images differ. Needs root and buildah (`apt-get install buildah`). Not part of CI.
"""

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

# What buildah leaves in every image it builds with chroot isolation, beside what the
# Dockerfile made: the mount points it binds for RUN (empty), and its own version label.
# Reported apart, not as differences (BuildKit leaves neither).
BUILDAH_STUBS = {"/dev", "/proc", "/sys", "/run", "/etc/hostname", "/etc/hosts", "/etc/resolv.conf"}
BUILDAH_LABEL = "io.buildah.version"

CONFIG_FIELDS = ["Env", "Cmd", "Entrypoint", "WorkingDir", "User", "Labels", "ExposedPorts",
                 "Volumes", "StopSignal", "Healthcheck", "Shell"]


def run(command, **kwargs):
    return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs)


def timed(command, **kwargs):
    started = time.monotonic()
    run(command, **kwargs)
    return time.monotonic() - started


def tree(layers):
    """path -> attributes, the layers (tar files, bottom first) applied with their whiteouts."""
    files = {}
    for layer in layers:
        with tarfile.open(layer) as archive:
            for member in archive.getmembers():
                path = "/" + member.name.lstrip("./").rstrip("/")
                directory, name = os.path.split(path)
                if name == ".wh..wh..opq":
                    for known in [p for p in files if p.startswith(directory.rstrip("/") + "/")]:
                        del files[known]
                    continue
                if name.startswith(".wh."):
                    gone = os.path.join(directory, name[4:])
                    for known in [p for p in files if p == gone or p.startswith(gone + "/")]:
                        del files[known]
                    continue
                digest = None
                if member.isfile():
                    digest = hashlib.sha256(archive.extractfile(member).read()).hexdigest()
                kind = "dir" if member.isdir() else "link" if member.issym() else "hard" if member.islnk() else "file" if member.isfile() else str(member.type)
                files[path] = (kind, oct(member.mode & 0o7777), member.uid, member.gid,
                               member.size if member.isfile() else 0, member.linkname, digest)
    files.pop("/", None)
    return files


def swerve_image(cache, reference):
    records = os.path.join(cache, "images", "images")
    name = reference.replace("/", "+").replace(":", "=")
    record = json.load(open(next(os.path.join(records, file) for file in os.listdir(records)
                                 if file.endswith(name + ".json"))))
    blobs = os.path.join(cache, "images", "blobs", "sha256")
    manifest = json.load(open(os.path.join(blobs, record["manifest_digest"].split(":")[1])))
    layers = [os.path.join(blobs, layer["digest"].split(":")[1]) for layer in manifest["layers"]]
    config = json.load(open(os.path.join(blobs, manifest["config"]["digest"].split(":")[1])))
    return tree(layers), config.get("config", {})


def buildah_image(root, reference, scratch):
    layout = os.path.join(scratch, "oci")
    shutil.rmtree(layout, ignore_errors=True)
    run(["buildah", "--root", root, "--runroot", root + "-run", "--storage-driver", "vfs",
         "push", reference, f"oci:{layout}"])
    index = json.load(open(os.path.join(layout, "index.json")))
    blob = lambda digest: os.path.join(layout, "blobs", "sha256", digest.split(":")[1])
    manifest = json.load(open(blob(index["manifests"][0]["digest"])))
    layers = [blob(layer["digest"]) for layer in manifest["layers"]]
    config = json.load(open(blob(manifest["config"]["digest"])))
    return tree(layers), config.get("config", {})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("context")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--swerve", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "swerve"))
    args = parser.parse_args()
    context = os.path.abspath(args.context)
    dockerfile = open(os.path.join(context, "Dockerfile")).read()
    last_run = max(i for i, line in enumerate(dockerfile.splitlines()) if line.upper().startswith("RUN "))
    times = {key: [] for key in ["swerve cold", "swerve rebuild", "buildah cold", "buildah rebuild"]}
    with tempfile.TemporaryDirectory(dir="/var/tmp") as scratch:
        for round_ in range(args.rounds):
            work = os.path.join(scratch, f"round{round_}")
            shutil.copytree(context, os.path.join(work, "ctx"))
            ctx = os.path.join(work, "ctx")
            cache, root = os.path.join(work, "swerve"), os.path.join(work, "buildah")
            swerve = [args.swerve, "--cache-dir", cache, "images", "build"]
            buildah = ["buildah", "--root", root, "--runroot", root + "-run", "--storage-driver", "vfs",
                       "bud", "--layers", "--isolation", "chroot"]
            # Alternate which builder goes first, so neither always meets a warm page cache.
            order = [("swerve", swerve), ("buildah", buildah)]
            if round_ % 2:
                order.reverse()
            for name, command in order:
                times[f"{name} cold"].append(timed(command + ["-t", "localhost/cmp:1", ctx]))
            lines = dockerfile.splitlines()
            lines[last_run] += f"  # changed {round_}"
            open(os.path.join(ctx, "Dockerfile"), "w").write("\n".join(lines) + "\n")
            for name, command in order:
                times[f"{name} rebuild"].append(timed(command + ["-t", "localhost/cmp:2", ctx]))
            if round_ == 0:
                ours, our_config = swerve_image(cache, "localhost/cmp:1")
                theirs, their_config = buildah_image(root, "localhost/cmp:1", work)
    differences, stubs = [], []
    for path in sorted(set(ours) | set(theirs)):
        if ours.get(path) != theirs.get(path):
            mine, other = ours.get(path), theirs.get(path)
            empty_stub = mine is None and other is not None and other[4] == 0 and (
                path in BUILDAH_STUBS
                or (other[0] == "dir" and all(p in BUILDAH_STUBS for p in theirs if p.startswith(path + "/"))
                    and not any(p.startswith(path + "/") for p in ours)))
            if empty_stub:
                stubs.append(path)
            else:
                differences.append(f"  {path}: swerve {mine} / buildah {other}")
    (their_config.get("Labels") or {}).pop(BUILDAH_LABEL, None)
    for field in CONFIG_FIELDS:
        mine, theirs_ = our_config.get(field) or None, their_config.get(field) or None
        if mine != theirs_:
            differences.append(f"  config {field}: swerve {mine!r} / buildah {theirs_!r}")
    print(f"Dockerfile: {os.path.join(context, 'Dockerfile')} ({len(dockerfile.splitlines())} lines), {args.rounds} rounds")
    print(f"file trees: {len(ours)} paths (swerve), {len(theirs)} (buildah)")
    print(f"buildah's empty mount stubs, not in swerve's image: {' '.join(stubs) or 'none'}")
    print("differences:" if differences else "no differences in the trees or the configs")
    print("\n".join(differences))
    for key, values in times.items():
        print(f"{key:16} median {statistics.median(values):7.3f} s  (min {min(values):.3f}, max {max(values):.3f})")
    ratio = lambda a, b: statistics.median(times[a]) / statistics.median(times[b])
    print(f"cold: swerve / buildah = {ratio('swerve cold', 'buildah cold'):.3f}")
    print(f"rebuild after the last RUN changed: swerve rebuild / swerve cold = {ratio('swerve rebuild', 'swerve cold'):.3f}; buildah's {ratio('buildah rebuild', 'buildah cold'):.3f}")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
