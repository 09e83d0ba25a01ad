#!/usr/bin/env bash
# The long fuzzing run behind docs/performance.md: each target's proptest properties, run again and
# again with fresh random seeds until the target has had MINUTES of fuzzing, then one line per target
# with the cases executed. CI runs the same properties with 256 cases each (`scripts/test.sh`).
#
#   scripts/fuzz-long.sh [MINUTES] [TARGET...]     # default: 10 minutes, every target
#
# Targets: watch (watch-stream decoder), list (streaming list decoder), kubeconfig, codegen-tags,
# http (the embedded API server's HTTP surface).
# A failing property stops its target; proptest prints the minimal input and saves it under
# fuzz/proptest-regressions/ so the next CI run replays it. Every round rebuilds from the working
# tree, so run it on a checkout nobody is editing (a `git clone` of the commit under test).
set -euo pipefail
cd "$(dirname "$0")/.."

minutes="${1:-10}"
shift || true
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(watch list kubeconfig codegen-tags http)

# target -> nextest filter and cases per property per round (a round takes roughly a minute).
filter_of() {
  case "$1" in
    watch) echo 'test(/^stream_decoders::watch_/)' ;;
    list) echo 'test(/^stream_decoders::list_/)' ;;
    kubeconfig) echo 'test(/^kubeconfig::/)' ;;
    codegen-tags) echo 'test(/^codegen_tags::/)' ;;
    http) echo 'test(/^testserver_http::/)' ;;
    *) echo "unknown target '$1' (watch, list, kubeconfig, codegen-tags, http)" >&2; exit 2 ;;
  esac
}
cases_of() {
  case "$1" in
    codegen-tags) echo 2000 ;;
    http) echo 5000 ;;
    *) echo 50000 ;;
  esac
}

cargo nextest run --release -p kubegen-fuzz --no-run
summary=()
for target in "${targets[@]}"; do
  filter="$(filter_of "$target")"
  cases="$(cases_of "$target")"
  properties="$(cargo nextest list --release -p kubegen-fuzz -E "$filter" --message-format oneline 2>/dev/null | wc -l)"
  start=$SECONDS
  rounds=0
  result=ok
  while [ $((SECONDS - start)) -lt $((minutes * 60)) ]; do
    if ! PROPTEST_CASES="$cases" cargo nextest run --release -p kubegen-fuzz -E "$filter" \
      --no-fail-fast --status-level fail --final-status-level fail; then
      result=FAILED
      break
    fi
    rounds=$((rounds + 1))
  done
  executed=$((rounds * cases * properties))
  line="$target: $properties properties, $rounds rounds x $cases cases = $executed cases in $((SECONDS - start)) s: $result"
  echo "== $line"
  summary+=("$line")
done
printf '%s\n' "${summary[@]}"
