/**
 * The import arrows of docs/architecture.md ("Import arrows"), checked on every TypeScript file of
 * the workspaces under a root folder (packages/*, services/*, cdk8s, tools/*, scripts, e2e, bench,
 * monitoring):
 * - which workspace package may import which (`ALLOWED`): packages and services by their
 *   layers; cdk8s imports no workspace at all (it describes the deployment, never runs a
 *   service's code); tools use the library packages' public exports; scripts (the repository's
 *   own tooling, `make dev` among them) and the witnesses (e2e, bench, monitoring) may use any
 *   workspace's public exports;
 * - nothing reaches into another workspace's files by relative path (a `src/` file or a `test/`
 *   folder);
 * - the Kafka client is imported only by packages/broker and the PostgreSQL client only by
 *   packages/store (both also by packages/devstack, which starts them for the tests). Type-only
 *   imports count. Tests (`*.test.ts`, `test/` folders, vitest configs), e2e, the benchmarks and
 *   the monitoring checks may import them: they are independent witnesses;
 * - SQL is written only in packages/store (and packages/devstack, which creates the test
 *   databases and roles): a string or template literal that starts like a statement (`SELECT …`,
 *   `INSERT INTO`, `DELETE FROM`, `CREATE TABLE …`, `BEGIN`, `SET name = …`, see `SQL_START`) is
 *   refused anywhere else. Comments, English messages (`'Select a pipeline'`), HTTP methods
 *   (`'DELETE'`) and span names (`'INSERT events.cloud_event'`) are not statements. A test,
 *   e2e, bench or monitoring file that reads or prepares the database in its own SQL on purpose,
 *   as an independent witness of what the store's code did, says so once, in a comment
 *   `sql-witness: <why>` (above its first statement); the check then lets all its literals pass.
 *   Production code cannot be a witness.
 *
 * @example
 * const { workspaces, problems } = checkImportArrows('/path/to/repo');
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** Where the rules are written in words; the failure message names it. */
export const RULES = 'docs/architecture.md, "Import arrows"';

/** Every package of the workspace (`@event-observatory/<name>`): what "any workspace" means. */
const ANY = '*';

/**
 * What each workspace's production code may import (`tools/*`: every tool); tests may also use
 * devstack's helpers.
 */
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
  cdk8s: [],
  'tools/*': ['service-kit', 'events', 'broker'],
  scripts: [ANY],
};
/** e2e, the benchmarks and the monitoring checks may use any workspace's public exports. */
const ANYTHING = ['e2e', 'bench', 'monitoring'];
/** Folders that are one workspace each, and folders whose every subfolder is one. */
const SINGLE = ['cdk8s', 'scripts', ...ANYTHING];
const NESTED = ['packages', 'services', 'tools'];

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

/** Workspaces that write SQL: the store, and devstack for the test databases and roles. */
const SQL_OWNERS = ['packages/store', 'packages/devstack'];

/**
 * How a SQL statement starts (case-sensitive: the repository writes SQL keywords in capitals).
 * Each keyword needs what follows it in a statement, so a lone `'DELETE'` (an HTTP method) or
 * `'INSERT events.cloud_event'` (a span name) is not one.
 */
const SQL_START = new RegExp(
  `^\\s*(?:${[
    String.raw`SELECT\s+\S`,
    String.raw`INSERT\s+INTO\s`,
    String.raw`UPDATE\s+[\w."]+\s+SET\s`,
    String.raw`DELETE\s+FROM\s`,
    String.raw`(?:CREATE|ALTER|DROP)\s+(?:OR\s+REPLACE\s+|UNIQUE\s+|TEMP(?:ORARY)?\s+|MATERIALIZED\s+)*(?:TABLE|INDEX|ROLE|USER|DATABASE|SCHEMA|FUNCTION|PROCEDURE|TRIGGER|TABLESPACE|VIEW|SEQUENCE|EXTENSION|SYSTEM|TYPE|POLICY|PUBLICATION|SUBSCRIPTION)\s+\S`,
    String.raw`TRUNCATE\s+\S`,
    String.raw`WITH\s+(?:RECURSIVE\s+)?\w+(?:\s*\([^)]*\))?\s+AS\s+(?:NOT\s+)?(?:MATERIALIZED\s+)?\(`,
    String.raw`LOCK\s+TABLE\s`,
    String.raw`COPY\s+[\w."]+\s*(?:\(|FROM\s|TO\s)`,
    String.raw`(?:VACUUM|ANALYZE)(?:\s+[\w.(]|\s*$)`,
    String.raw`EXPLAIN\s*\(|EXPLAIN\s+(?:ANALYZE|SELECT)\b`,
    String.raw`(?:BEGIN|COMMIT|ROLLBACK|START\s+TRANSACTION)(?:\s*;|\s*$|\s+(?:ISOLATION|TO\s+SAVEPOINT)\b)`,
    String.raw`SET\s+(?:LOCAL\s+|SESSION\s+)?[a-z_]+\s*(?:=|TO\s)`,
    String.raw`(?:GRANT|REVOKE)\s+[\w, ]+\s+ON\s`,
  ].join('|')})`,
);

/** A first keyword of `SQL_START` anywhere: only a file that has one is parsed. */
const SQL_KEYWORD =
  /\b(?:SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|TRUNCATE|WITH|LOCK|COPY|VACUUM|ANALYZE|EXPLAIN|BEGIN|COMMIT|ROLLBACK|START|SET|GRANT|REVOKE)\b/;

/** A comment that declares the file an independent SQL witness, with its reason. */
const SQL_WITNESS = /(?:\/\/|\*)\s*sql-witness:\s*\S/;

/** The string and template literals of a file that start like a SQL statement, with their lines. */
export function sqlLiterals(path: string, text: string): { line: number; text: string }[] {
  if (!SQL_KEYWORD.test(text)) return [];
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    const literal =
      ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
        ? node.text
        : ts.isTemplateExpression(node)
          ? node.head.text
          : undefined;
    // A substitution right after the head stands for a name or a value (`CREATE ROLE ${name}`).
    const tested = ts.isTemplateExpression(node) ? `${literal}x` : literal;
    if (literal !== undefined && tested !== undefined && SQL_START.test(tested)) {
      const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
      found.push({ line, text: literal.trim().split('\n')[0]!.slice(0, 40).trim() });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

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
  if (SINGLE.includes(rel[0]!)) return rel[0];
  return rel.length > 2 && NESTED.includes(rel[0]!) ? `${rel[0]}/${rel[1]}` : undefined;
}

function allowedOf(workspace: string): readonly string[] {
  return ALLOWED[workspace] ?? ALLOWED[`${workspace.split('/')[0]}/*`] ?? [];
}

/** The workspaces present under `root`: the fixed ones that hold files, and every `tools/*` folder. */
function workspacesUnder(root: string): string[] {
  const entries = (dir: string) => {
    try {
      return readdirSync(join(root, dir), { withFileTypes: true }).filter((e) => !e.name.startsWith('.'));
    } catch {
      return [];
    }
  };
  const fixed = [...Object.keys(ALLOWED), ...ANYTHING].filter(
    (w) => !w.endsWith('/*') && entries(w).length > 0,
  );
  const tools = entries('tools')
    .filter((e) => e.isDirectory())
    .map((e) => `tools/${e.name}`);
  return [...fixed, ...tools];
}

export interface ImportArrowsReport {
  /** Workspaces found (and checked) under the root. */
  workspaces: number;
  /** One line per broken arrow: `file:line: what is wrong`. */
  problems: string[];
}

export function checkImportArrows(root: string): ImportArrowsReport {
  const problems: string[] = [];
  const workspaces = workspacesUnder(root);
  for (const workspace of workspaces) {
    const witness = ANYTHING.includes(workspace);
    const allowed = allowedOf(workspace);
    for (const file of sources(join(root, workspace))) {
      const rel = relative(root, file);
      const isTest = /\.test\.tsx?$|[/\\]test[/\\]|vitest\.config\.ts$/.test(rel);
      const text = readFileSync(file, 'utf8');
      const at = (index: number | undefined) => `${rel}:${text.slice(0, index).split('\n').length}`;
      // Static imports and re-exports (also spread over several lines, type-only ones too),
      // side-effect and dynamic imports, and CommonJS `require`.
      for (const m of text.matchAll(/\b(?:from|import|require)\s*\(?\s*['"]([^'"]+)['"]/g)) {
        const spec = m[1]!;
        const where = at(m.index);
        const pkg = /^@event-observatory\/([a-z0-9-]+)/.exec(spec)?.[1];
        if (pkg !== undefined && !witness) {
          const own = workspace.split('/').at(-1);
          if (
            pkg !== own &&
            !allowed.includes(ANY) &&
            !allowed.includes(pkg) &&
            !(isTest && pkg === 'devstack')
          ) {
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
      if (SQL_OWNERS.includes(workspace)) continue;
      const mayWitness = isTest || witness;
      if (mayWitness && SQL_WITNESS.test(text)) continue;
      for (const sql of sqlLiterals(file, text)) {
        problems.push(
          `${rel}:${sql.line}: SQL outside packages/store ('${sql.text}'); ${
            mayWitness
              ? 'use the store or devstack, or mark the file `sql-witness: <why>` if it checks the database independently'
              : 'move the statement into packages/store and call its export'
          }`,
        );
      }
    }
  }
  return { workspaces: workspaces.length, problems };
}
