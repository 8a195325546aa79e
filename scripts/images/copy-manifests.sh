#!/bin/sh
# Runs inside the Dockerfile's `manifests` stage: copies the root package.json, the lock file and
# the package.json of every workspace the root lists (`packages/*`, `monitoring`, ...) from
# <source> to <target>, keeping their paths.  Usage: copy-manifests.sh <source> <target>
set -eu
cd "$1"
mkdir -p "$2"
cp package.json package-lock.json "$2/"
node -e '
  const { cpSync, existsSync, readdirSync } = require("node:fs");
  const target = process.argv[1];
  for (const w of require("./package.json").workspaces) {
    const dirs = w.endsWith("/*") ? readdirSync(w.slice(0, -2)).map((d) => `${w.slice(0, -2)}/${d}`) : [w];
    for (const d of dirs) if (existsSync(`${d}/package.json`)) cpSync(`${d}/package.json`, `${target}/${d}/package.json`);
  }
' "$2"
