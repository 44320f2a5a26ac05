#!/usr/bin/env bash
# Runs every benchmark harness and writes BENCHMARKS.md: the date, the machine and the commit, then one
# section per harness. Usage: bench/run.sh [harness...]   (default: all of them)
# Each harness is a Go program under bench/<name>/ that prints a Markdown section on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every harness, in the order BENCHMARKS.md shows them.
all=(validate memory locomo mcp hooks sandbox filing imports merge brain jobs)
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  harnesses=("${all[@]}")
fi
out=BENCHMARKS.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/box" ./cmd/box
export BOX_BIN="$tmp/box"
commit="$(git rev-parse --short HEAD)$(git diff --quiet || echo ' with uncommitted changes')"
for h in "${harnesses[@]}"; do
  echo "bench: running $h" >&2
  go run "./bench/$h" >"$tmp/$h.md"
  # Each section says when and at which commit it was measured: a partial run keeps the others as they were.
  when="_Measured $(date -u +%Y-%m-%dT%H:%MZ), commit ${commit}._"
  awk -v w="$when" '/^<!-- bench:end -->/{print w; print ""} {print}' "$tmp/$h.md" >"$tmp/$h.stamped" && mv "$tmp/$h.stamped" "$tmp/$h.md"
done
{
  echo "# Benchmarks"
  echo
  echo "Written by \`bench/run.sh\` on $(date -u +%Y-%m-%dT%H:%MZ); machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB;"
  echo "commit ${commit} (this run: ${harnesses[*]}; each section says when it was measured). Reproduce with \`bench/run.sh\` (or \`bench/run.sh NAME\` for one section)."
  echo
  # Keep sections of harnesses not run this time.
  for h in "${all[@]}"; do
    if [ -f "$tmp/$h.md" ]; then
      cat "$tmp/$h.md"
    elif [ -f "$out" ]; then
      awk -v h="<!-- bench:$h -->" 'index($0,h)==1{p=1} p&&/^<!-- bench:end -->/{print;p=0;next} p' "$out"
    fi
    echo
  done
} >"$tmp/out.md"
mv "$tmp/out.md" "$out"
echo "bench: wrote $out" >&2
