#!/bin/sh
# Runs inside the Dockerfile: lays out /apps/<service>/ with what that service runs and nothing
# else, in two steps so that the first is cached until a manifest or the lock file changes:
#   service-tree.sh modules <service> <manifests>: its manifest and those of the workspace packages
#     among its production dependencies (transitively), and their production dependencies only
#     (`npm install --omit=dev` of the locked versions, patches/ applied);
#   service-tree.sh dist <service> <build tree>: their compiled dist/, migrations/, and `start`, the
#     image's command: the service's `start:prod` script run where npm runs it, so the node flags
#     written there (which `make dev`, the tests and the benchmarks also read) are the image's.
set -eu
step=$1 service=$2 from=$3
out=/apps/$service

case $step in
  modules)
    mkdir -p "$out"
    cp -r "$from/." "$out/"
    cd "$out"
    node -e '
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
      console.log([...keep].join("\n"));
    ' "services/$service" >.workspaces
    # The other workspaces go before the install: npm installs every workspace it finds (e.g. the
    # devstack's PostgreSQL binaries would otherwise come along).
    for manifest in $(find . -mindepth 2 -name package.json -not -path './node_modules/*'); do
      dir=$(dirname "${manifest#./}")
      grep -qx "$dir" .workspaces || rm -rf "$dir"
    done
    npm install --omit=dev --no-audit --no-fund --ignore-scripts >/dev/null
    npx --yes patch-package@8.0.1 >/dev/null
    rm -rf patches package-lock.json
    # Type declarations and source maps are never loaded at run time (no --enable-source-maps).
    find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete
    # Nor are these: TypeScript sources (Node never strips types under node_modules), Markdown,
    # packages' own test suites, the `bare-*` modules of the Bare runtime (chosen only under its
    # `bare` condition; Node takes the `default` one), and the ES module builds a package names
    # only in `module`/`esnext` (without `exports`, Node resolves `main` alone).
    find node_modules -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -iname '*.md' \) -delete
    find node_modules -type d \( -name test -o -name tests -o -name __tests__ \) -prune -exec rm -rf {} +
    rm -rf node_modules/bare-*
    node -e '
      const { existsSync, readdirSync, readFileSync, rmSync } = require("node:fs");
      const { dirname, join, normalize } = require("node:path");
      const prune = (pkgDir) => {
        const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
        if (pkg.exports !== undefined || typeof pkg.main !== "string") return;
        const main = normalize(pkg.main);
        for (const entry of [pkg.module, pkg.esnext]) {
          const dir = typeof entry === "string" ? normalize(dirname(entry)) : ".";
          if (dir !== "." && !main.startsWith(`${dir}/`)) rmSync(join(pkgDir, dir), { recursive: true, force: true });
        }
      };
      const walk = (modules) => {
        for (const name of readdirSync(modules)) {
          const dir = join(modules, name);
          if (name.startsWith("@")) walk(dir);
          else if (existsSync(join(dir, "package.json"))) prune(dir);
          if (existsSync(join(dir, "node_modules"))) walk(join(dir, "node_modules"));
        }
      };
      walk("node_modules");
    '
    ;;
  dist)
    cd "$out"
    while read -r dir; do cp -r "$from/$dir/dist" "$dir/"; done <.workspaces
    cp -r "$from/migrations" .
    rm .workspaces
    command=$(node -p 'require(process.argv[1]).scripts["start:prod"]' "./services/$service/package.json")
    printf '#!/bin/sh\ncd /app/services/%s && exec %s "$@"\n' "$service" "$command" >start
    chmod 755 start
    ;;
  *)
    echo "usage: $0 modules|dist <service> <folder>" >&2
    exit 2
    ;;
esac
