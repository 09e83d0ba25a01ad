# Sourced by .ci/run and scripts/test.sh. `stage "what"` prints a stage's first line with the disk
# left: a full disk is the likeliest failure on a small machine. When KUBEGEN_DISK_LOG names a
# file, the line also goes there with the time, for .ci/run to print again at its end, so that a
# log cut to its tail still shows which stage filled the disk.
stage() {
  local line
  line="== $1 [disk: $(df -h . | tail -1 | awk '{print $4}') free]"
  echo "$line"
  if [ -n "${KUBEGEN_DISK_LOG:-}" ]; then
    echo "$(date -u +%H:%M:%S) $line" >>"$KUBEGEN_DISK_LOG"
  fi
}
