#!/bin/sh
# Runs inside the Dockerfile's `apps` stage: lays out /apps/<service>/ with what that service runs
# and nothing else: its manifest and those of the workspace packages among its production
# dependencies (transitively), their production dependencies (`npm install --omit=dev` of the
# locked versions, patches/ applied), their dist/, and migrations/.
# Usage: service-tree.sh <service> <manifests folder> <build tree>
set -eu
service=$1 manifests=$2 build=$3
out=/apps/$service
mkdir -p "$out"
cp -r "$manifests/." "$out/"
cp -r "$build/patches" "$build/migrations" "$out/"
cd "$out"

keep=$(node -e '
  const { existsSync, readdirSync } = require("node:fs");
  const manifest = (dir) => require(`./${dir}/package.json`);
  const dirs = ["packages", "services"].flatMap((top) => readdirSync(top).map((d) => `${top}/${d}`));
  const byName = new Map(dirs.filter((d) => existsSync(`${d}/package.json`)).map((d) => [manifest(d).name, d]));
  const keep = new Set();
  const visit = (dir) => {
    if (keep.has(dir)) return;
    keep.add(dir);
    for (const name of Object.keys(manifest(dir).dependencies ?? {})) if (byName.has(name)) visit(byName.get(name));
  };
  visit(process.argv[1]);
  console.log([...keep].join(" "));
' "services/$service")
# The other workspaces go before the install: npm installs every workspace it finds, devDependencies
# of the root aside (e.g. the devstack's PostgreSQL binaries would otherwise come along).
for dir in packages/* services/* e2e; do
  case " $keep " in *" $dir "*) ;; *) rm -rf "$dir" ;; esac
done
npm install --omit=dev --no-audit --no-fund --ignore-scripts >/dev/null
npx --yes patch-package@8.0.1 >/dev/null
for dir in $keep; do cp -r "$build/$dir/dist" "$dir/"; done
rm -rf patches package-lock.json
