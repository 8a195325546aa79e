/**
 * The import arrows of ../shared/DESIGN.md ("Ownership"), checked on every TypeScript file of the
 * workspaces under a root folder:
 * - which workspace package may import which;
 * - nothing reaches into another workspace's files by relative path (a `src/` file or a `test/`
 *   folder);
 * - the Kafka client is imported only by packages/broker and the PostgreSQL client only by
 *   packages/store (both also by packages/devstack, which starts them for the tests). Type-only
 *   imports count. Tests (`*.test.ts`, `test/` folders, vitest configs), e2e, the benchmarks and
 *   the monitoring checks may import them: they are independent witnesses.
 *
 * @example
 * const { workspaces, problems } = checkImportArrows('/path/to/repo');
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

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
  'services/search': ['service-kit', 'events', 'store'],
  'services/jobs': ['service-kit', 'store'],
  'services/controller': ['service-kit', 'broker', 'store'],
};
/** e2e, the benchmarks and the monitoring checks may use any workspace's public exports. */
const ANYTHING = ['e2e', 'bench', 'monitoring'];

/** Client libraries of the systems the packages own, and the workspaces that may import them. */
const OWNED_CLIENTS = [
  {
    client: 'the Kafka client',
    pattern: /^(?:kafkajs|@platformatic\/kafka)(?:\/|$)/,
    owners: ['packages/broker', 'packages/devstack'],
  },
  {
    // `pg` and its family (pg-pool, pg-protocol, pg-copy-streams, ...).
    client: 'the PostgreSQL client',
    pattern: /^pg(?:-[a-z0-9-]+)?(?:\/|$)/,
    owners: ['packages/store', 'packages/devstack'],
  },
] as const;

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist', 'results'].includes(entry.name) || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) yield path;
  }
}

function workspaceOf(root: string, file: string): string | undefined {
  const rel = relative(root, file).split(sep);
  if (ANYTHING.includes(rel[0]!)) return rel[0];
  return rel.length > 2 && (rel[0] === 'packages' || rel[0] === 'services')
    ? `${rel[0]}/${rel[1]}`
    : undefined;
}

export interface ImportArrowsReport {
  /** Workspaces found (and checked) under the root. */
  workspaces: number;
  /** One line per broken arrow: `file:line: what is wrong`. */
  problems: string[];
}

export function checkImportArrows(root: string): ImportArrowsReport {
  const problems: string[] = [];
  const workspaces = [...Object.keys(ALLOWED), ...ANYTHING].filter((w) => {
    try {
      return readdirSync(join(root, w)).length > 0;
    } catch {
      return false;
    }
  });
  for (const workspace of workspaces) {
    const witness = ANYTHING.includes(workspace);
    for (const file of sources(join(root, workspace))) {
      const isTest = /\.test\.tsx?$|[/\\]test[/\\]|vitest\.config\.ts$/.test(relative(root, file));
      const text = readFileSync(file, 'utf8');
      // Static imports and re-exports (also spread over several lines, type-only ones too),
      // side-effect and dynamic imports, and CommonJS `require`.
      for (const m of text.matchAll(/\b(?:from|import|require)\s*\(?\s*['"]([^'"]+)['"]/g)) {
        const spec = m[1]!;
        const where = `${relative(root, file)}:${text.slice(0, m.index).split('\n').length}`;
        const pkg = /^@event-observatory\/([a-z-]+)/.exec(spec)?.[1];
        if (pkg !== undefined && !witness) {
          const own = workspace.split('/')[1];
          const allowed = ALLOWED[workspace] ?? [];
          if (pkg !== own && !allowed.includes(pkg) && !(isTest && pkg === 'devstack')) {
            problems.push(`${where}: ${workspace} may not import @event-observatory/${pkg}`);
          }
        }
        const owned = OWNED_CLIENTS.find((c) => c.pattern.test(spec));
        if (owned && !witness && !isTest && !(owned.owners as readonly string[]).includes(workspace)) {
          problems.push(
            `${where}: ${workspace} may not import ${spec} (${owned.client}, owned by ${owned.owners[0]})`,
          );
        }
        if (spec.startsWith('.')) {
          const target = resolve(file, '..', spec);
          const targetWorkspace = workspaceOf(root, target);
          if (targetWorkspace !== undefined && targetWorkspace !== workspace) {
            problems.push(
              `${where}: reaches into ${relative(root, target)} by path; import the package instead`,
            );
          }
        }
      }
    }
  }
  return { workspaces: workspaces.length, problems };
}
