#!/usr/bin/env bash
# Prints one closing line summing every workspace's vitest run (see scripts/tally-reporter.ts).
set -euo pipefail
awk '{p+=$1; f+=$2; s+=$3} END {printf "Tests: %d passed, %d failed, %d skipped\n", p, f, s; exit (f > 0 || p == 0)}' "$1"
