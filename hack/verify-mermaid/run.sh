#!/usr/bin/env bash
# Installs the pinned parser into .tools/verify-mermaid (once) and checks every tracked markdown file.
set -euo pipefail
cd "$(dirname "$0")/../.."
for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "verify-mermaid: $tool is missing; on Debian: apt-get install nodejs npm" >&2
    exit 1
  }
done
tools=.tools/verify-mermaid
if [ ! -d "$tools/node_modules/mermaid" ]; then
  mkdir -p "$tools"
  cp hack/verify-mermaid/package.json hack/verify-mermaid/package-lock.json "$tools/"
  (cd "$tools" && npm ci --silent --no-audit --no-fund)
fi
cp hack/verify-mermaid/check.mjs "$tools/"
git ls-files -z '*.md' | xargs -0 node "$tools/check.mjs"
