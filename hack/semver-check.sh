#!/usr/bin/env bash
# Semver check of the published crates between the last release tag and HEAD: a change that breaks
# a user's build must come with a major version bump (CHANGELOG.md). Before the first tag there is
# nothing to compare with, and the check says so; cargo-semver-checks is installed only when a tag
# exists, since building it takes minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null || true)
if [ -z "$tag" ]; then
  echo "semver-check: no release tag (v*) yet: nothing to compare with"
  exit 0
fi
if ! command -v cargo-semver-checks >/dev/null 2>&1; then
  echo "installing cargo-semver-checks from crates.io"
  cargo install cargo-semver-checks --locked
fi
echo "semver-check: the published crates at HEAD against $tag"
cargo semver-checks --workspace --baseline-rev "$tag"
