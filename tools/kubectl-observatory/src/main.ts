#!/usr/bin/env node
/**
 * kubectl-observatory: a kubectl plugin (`kubectl observatory ...` once it is on the PATH).
 *
 *   status [-n NS | -A]                         flow health of the Pipelines (kubectl get pipelines)
 *   tail [--search-url URL] [--query Q]         the search service's live tail
 *   dlq list [--reason R] [--limit N]           the consumer's dead letters
 *   dlq replay [--dry-run | --commit] [...]     plan (default) or carry out a replay
 *
 * The admin calls take the token from OBSERVATORY_ADMIN_TOKEN or --token-file; the tail sends the
 * token of OBSERVATORY_SEARCH_TOKEN or --search-token-file. Tokens go in headers, never in argv.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { type Args, intFlag, parseArgs } from './args.js';
import { listDeadLetters, replayDeadLetters } from './dlq.js';
import { type PipelineView, statusTable } from './status.js';
import { tail } from './tail.js';

const USAGE = `Usage: kubectl observatory <command>
  status [-n NAMESPACE | -A] [--context C] [--kubeconfig F]   flow health of the Pipelines
  tail [--search-url URL] [--query 'q=boiler&severity=error']  live tail of the search service
  dlq list [--consumer-url URL] [--reason R] [--limit N]        dead letters of the consumer
  dlq replay [--dry-run | --commit] [--reason R] [--limit N]    plan a replay (default), or do it
Admin calls (dlq) send the token of OBSERVATORY_ADMIN_TOKEN or --token-file; the tail sends
the token of OBSERVATORY_SEARCH_TOKEN or --search-token-file (e.g. kubectl create token).
Defaults: --search-url http://127.0.0.1:9000, --consumer-url http://127.0.0.1:8084
(e.g. after kubectl port-forward svc/<release>-search 9000:9000). -n, -A, --context and
--kubeconfig apply to status only: tail and dlq talk to the URL given.`;

const FLAGS = new Set([
  'all-namespaces',
  'namespace',
  'context',
  'kubeconfig',
  'search-url',
  'query',
  'consumer-url',
  'reason',
  'limit',
  'token-file',
  'search-token-file',
  'dry-run',
  'commit',
  'help',
]);

async function status(args: Args): Promise<string> {
  const kubectl = ['get', 'pipelines.observatory.dev', '-o', 'json'];
  if (args.flags.has('all-namespaces')) kubectl.push('--all-namespaces');
  for (const flag of ['namespace', 'context', 'kubeconfig']) {
    const value = args.flags.get(flag);
    if (value) kubectl.push(`--${flag}`, value);
  }
  const { stdout } = await promisify(execFile)('kubectl', kubectl, { maxBuffer: 64 * 1024 * 1024 });
  const list = JSON.parse(stdout) as { items: PipelineView[] };
  return list.items.length === 0 ? 'No Pipelines found.' : statusTable(list.items, new Date());
}

/** The token of `--<flag>` (a file) or of the variable `env`; undefined when neither is set. */
function tokenOf(args: Args, flag: string, env: string): string | undefined {
  const file = args.flags.get(flag);
  return (file ? readFileSync(file, 'utf8') : process.env[env])?.trim() || undefined;
}

function adminToken(args: Args): string {
  const token = tokenOf(args, 'token-file', 'OBSERVATORY_ADMIN_TOKEN');
  if (!token) throw new Error('no admin token: set OBSERVATORY_ADMIN_TOKEN or pass --token-file');
  return token;
}

/** The kubectl flags mean nothing to the commands that talk to a URL: refused, not ignored. */
function refuseKubeFlags(args: Args, command: string): void {
  for (const flag of ['namespace', 'all-namespaces', 'context', 'kubeconfig'])
    if (args.flags.has(flag))
      throw new Error(
        `--${flag} applies to status only: ${command} talks to the URL given (--search-url, --consumer-url), e.g. a port-forward`,
      );
}

async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv, FLAGS);
  const [command, sub] = args.command;
  if (!command || args.flags.has('help')) {
    console.log(USAGE);
    return;
  }
  const dlq = () => ({
    consumerUrl: (args.flags.get('consumer-url') ?? 'http://127.0.0.1:8084').replace(/\/$/, ''),
    token: adminToken(args),
    limit: intFlag(args, 'limit'),
    reason: args.flags.get('reason'),
  });
  if (command !== 'status') refuseKubeFlags(args, command);
  if (command === 'status') console.log(await status(args));
  else if (command === 'tail') {
    const stop = new AbortController();
    process.once('SIGINT', () => stop.abort());
    await tail({
      searchUrl: (args.flags.get('search-url') ?? 'http://127.0.0.1:9000').replace(/\/$/, ''),
      query: args.flags.get('query') ?? '',
      token: () => tokenOf(args, 'search-token-file', 'OBSERVATORY_SEARCH_TOKEN'),
      write: (line) => console.log(line),
      warn: (line) => console.error(line),
      signal: stop.signal,
    });
  } else if (command === 'dlq' && sub === 'list') console.log(await listDeadLetters(dlq()));
  else if (command === 'dlq' && sub === 'replay') {
    if (args.flags.has('commit') && args.flags.has('dry-run'))
      throw new Error('--dry-run and --commit exclude each other');
    const replay = await replayDeadLetters(dlq(), args.flags.has('commit'));
    console.log(replay.text);
    // Records the replay could not publish stay dead-lettered: a script must not take that for done.
    if (replay.failed > 0) process.exitCode = 1;
  } else
    throw new Error(
      `unknown command ${JSON.stringify(args.command.join(' '))} (see kubectl observatory --help)`,
    );
}

main(process.argv.slice(2)).catch((error: Error) => {
  console.error(`kubectl observatory: ${error.message}`);
  process.exit(1);
});
