# Sourced by the set-up scripts: makes sure git, nsenter, Python >= 3.11 and a Rust toolchain exist,
# installing git and Python from Debian packages when run as root on a machine without them.
set -euo pipefail

need_apt=()
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v nsenter >/dev/null 2>&1 || need_apt+=(util-linux)   # nsenter: git in a sandbox
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
  need_apt+=(python3)
fi
# Virtual environments for the Ray tests (scripts/ray-tests.sh): Debian splits them out.
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: ${need_apt[*]}" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "swerve needs: ${need_apt[*]} (Python 3.11 or newer); install them and run again" >&2
    exit 1
  fi
fi
# The image tests' real components (Debian packages, root only): the CNCF distribution
# registry, skopeo (push), umoci and debootstrap (scripts/test-images.sh builds the images,
# cached), htpasswd (the registry's basic auth). Without them the image tests skip, except
# under SWERVE_REQUIRE_IMAGES=1 (scripts/test.sh as root).
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  need_images=()
  for tool in docker-registry:docker-registry skopeo:skopeo umoci:umoci debootstrap:debootstrap htpasswd:apache2-utils; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || need_images+=("${tool##*:}")
  done
  if [ ${#need_images[@]} -gt 0 ]; then
    echo "installing: ${need_images[*]}" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${need_images[@]}" >/dev/null
  fi
fi
# Debian's chromium, the headless browser `swerve view`'s tests drive over the DevTools
# protocol (root only). Without it those tests skip, except under SWERVE_REQUIRE_BROWSER=1
# (scripts/test.sh as root).
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && ! command -v chromium >/dev/null 2>&1; then
  echo "installing: chromium" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    chromium >/dev/null
fi
# `requests`, for the trainer shims' smoke test (examples/trainers, docs/serve.md); the test
# is skipped without it, except where SWERVE_REQUIRE_PYTHON_REQUESTS=1 (scripts/test.sh).
if ! python3 -c 'import requests' >/dev/null 2>&1; then
  python3 -m pip install --quiet requests >/dev/null 2>&1 \
    || python3 -m pip install --quiet --break-system-packages requests >/dev/null 2>&1 \
    || echo "note: python3 has no \`requests\` and pip could not install it; the trainer shims' smoke test will be skipped" >&2
fi
if ! command -v cargo >/dev/null 2>&1; then
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
fi
command -v cargo >/dev/null 2>&1 || { echo "swerve needs a Rust toolchain (rustup.rs), 1.90 or newer" >&2; exit 1; }

# The Python package's suite (scripts/python-tests.sh) makes a virtual environment: Debian
# ships `venv`'s pip in python3-venv.
if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: python3-venv" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  else
    echo "note: python3 cannot make virtual environments (install python3-venv); scripts/python-tests.sh will fail" >&2
  fi
fi
