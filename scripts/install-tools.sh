#!/usr/bin/env bash
# Installs the tools a fresh machine lacks. Idempotent: does nothing when they are present.
set -euo pipefail
if ! command -v cargo-nextest >/dev/null 2>&1; then
  echo "installing cargo-nextest from crates.io"
  cargo install cargo-nextest --locked
fi
