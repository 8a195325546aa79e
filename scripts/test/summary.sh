#!/usr/bin/env bash
# Prints the failed tests of every workspace's vitest run (each with its error's first lines), then
# a line per file with failures (how many, and the first one's title: what survives when a CI log
# keeps only its tail), then one closing line summing them all (see scripts/test/tally-reporter.ts).
set -euo pipefail
if [ -s "$1.failed" ]; then
  cat "$1.failed"
  awk -v root="$PWD/" '
    /^    / { next }                             # the further lines of an error
    {
      line = substr($0, 8)                       # without "FAILED "
      if (index(line, root) == 1) line = substr(line, length(root) + 1)
      file = line
      sub(/ (> |\().*$/, "", file)
      if (!(file in count)) {
        order[++files] = file
        first[file] = substr(line, length(file) + 2, 200)
        sub(/^> /, "", first[file])
      }
      count[file]++
    }
    END { for (i = 1; i <= files; i++) printf "failed in %s: %d, the first: %s\n", order[i], count[order[i]], first[order[i]] }
  ' "$1.failed"
fi
awk '{p+=$1; f+=$2; s+=$3} END {printf "Tests: %d passed, %d failed, %d skipped\n", p, f, s; exit (f > 0 || p == 0)}' "$1"
