/**
 * Checks the import arrows of ../shared/DESIGN.md ("Ownership") on every TypeScript file of the
 * workspaces: which workspace package may import which, and that nothing reaches into another
 * workspace's files by relative path (a `src/` file or a `test/` folder). `make lint` runs it;
 * it prints each broken arrow with its file and line and exits 1.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

const root = resolve(import.meta.dirname, '..');

/** What each workspace's production code may import; tests may also use devstack's helpers. */
const ALLOWED: Record<string, readonly string[]> = {
  'packages/service-kit': [],
  'packages/events': [],
  'packages/forge-client': [],
  'packages/broker': ['service-kit'],
  'packages/store': ['service-kit'],
  'packages/devstack': ['broker', 'store'],
  'services/ingest': ['service-kit', 'events', 'broker'],
  'services/consumer': ['service-kit', 'events', 'broker', 'store'],
  'services/search': ['service-kit', 'store'],
  'services/jobs': ['service-kit', 'store'],
  'services/controller': ['service-kit', 'broker'],
};
/** e2e, the benchmarks and the monitoring checks may use any workspace's public exports. */
const ANYTHING = ['e2e', 'bench', 'monitoring'];

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist', 'results'].includes(entry.name) || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) yield path;
  }
}

function workspaceOf(file: string): string | undefined {
  const rel = relative(root, file).split(sep);
  if (ANYTHING.includes(rel[0]!)) return rel[0];
  return rel.length > 2 && (rel[0] === 'packages' || rel[0] === 'services')
    ? `${rel[0]}/${rel[1]}`
    : undefined;
}

const problems: string[] = [];
const workspaces = [...Object.keys(ALLOWED), ...ANYTHING].filter((w) => {
  try {
    return readdirSync(join(root, w)).length > 0;
  } catch {
    return false;
  }
});
for (const workspace of workspaces) {
  for (const file of sources(join(root, workspace))) {
    const isTest = /\.test\.tsx?$|[/\\]test[/\\]|vitest\.config\.ts$/.test(relative(root, file));
    const text = readFileSync(file, 'utf8');
    // Static imports and re-exports (also spread over several lines), side-effect and dynamic imports.
    for (const m of text.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      const spec = m[1]!;
      const where = `${relative(root, file)}:${text.slice(0, m.index).split('\n').length}`;
      const pkg = /^@event-observatory\/([a-z-]+)/.exec(spec)?.[1];
      if (pkg !== undefined && !ANYTHING.includes(workspace)) {
        const own = workspace.split('/')[1];
        const allowed = ALLOWED[workspace] ?? [];
        if (pkg !== own && !allowed.includes(pkg) && !(isTest && pkg === 'devstack')) {
          problems.push(`${where}: ${workspace} may not import @event-observatory/${pkg}`);
        }
      }
      if (spec.startsWith('.')) {
        const target = resolve(file, '..', spec);
        const targetWorkspace = workspaceOf(target);
        if (targetWorkspace !== undefined && targetWorkspace !== workspace) {
          problems.push(
            `${where}: reaches into ${relative(root, target)} by path; import the package instead`,
          );
        }
      }
    }
  }
}
if (problems.length > 0) {
  console.error(`Import arrows broken (see ../shared/DESIGN.md, "Ownership"):\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(`Import arrows hold in ${workspaces.length} workspaces.`);
