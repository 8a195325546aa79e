#!/usr/bin/env bash
# The dependency advisory gate: no high or critical advisory in production dependencies
# (`npm audit --omit=dev --audit-level=high`). Exit status:
#   0  the registry answered and reported nothing at or above high;
#   1  it reported advisories at or above high (listed above the verdict);
#   2  it could not be asked (the advisory endpoint refused or is unreachable). This is not a pass:
#      run the gate where the public registry's audit endpoint answers (.github/workflows/audit.yml).
set -uo pipefail
cd "$(dirname "$0")/.."

report=$(mktemp)
trap 'rm -f "$report"' EXIT
npm audit --omit=dev --audit-level=high --json >"$report" 2>"$report.err"
status=$?
errors=$(cat "$report.err"; rm -f "$report.err")

# npm writes {"error": {...}} (or nothing) when the endpoint did not answer with advisories.
if ! node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); process.exit(r.metadata?.vulnerabilities ? 0 : 1)' "$report" 2>/dev/null; then
  echo "audit-gate: COULD NOT ASK. The registry's advisory endpoint did not answer with advisories," >&2
  echo "audit-gate: so nothing is known about production dependencies; this is not a pass." >&2
  echo "audit-gate: registry: $(npm config get registry)" >&2
  grep -h -E 'audit|405|ENOTFOUND|ECONNREFUSED|ETIMEDOUT' <<<"$errors" | sed 's/^/audit-gate: npm: /' >&2
  echo "audit-gate: run it where the public registry answers (see .github/workflows/audit.yml)." >&2
  exit 2
fi

node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const v = r.metadata.vulnerabilities;
  for (const [name, a] of Object.entries(r.vulnerabilities ?? {})) {
    if (a.severity === "high" || a.severity === "critical") console.log(`  ${a.severity}: ${name} ${a.range ?? ""}`);
  }
  console.log(`audit-gate: production dependencies: ${v.critical} critical, ${v.high} high, ${v.moderate} moderate, ${v.low} low`);
' "$report"
if [ "$status" -ne 0 ]; then
  echo "audit-gate: FAILED: advisories at or above high in production dependencies" >&2
  exit 1
fi
echo "audit-gate: passed: no high or critical advisory in production dependencies"
