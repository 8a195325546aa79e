#!/usr/bin/env node
/**
 * kubectl-observatory: a kubectl plugin (`kubectl observatory ...` once it is on the PATH).
 *
 *   status [-n NS | -A]                         flow health of the Pipelines (kubectl get pipelines)
 *   tail [--search-url URL] [--query Q]         the search service's live tail
 *   dlq list [--reason R] [--limit N]           the consumer's dead letters
 *   dlq replay [--dry-run | --commit] [...]     plan (default) or carry out a replay
 *
 * The admin calls take the token from OBSERVATORY_ADMIN_TOKEN or --token-file.
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
Admin calls (dlq) send the token of OBSERVATORY_ADMIN_TOKEN or --token-file.
Defaults: --search-url http://127.0.0.1:9000, --consumer-url http://127.0.0.1:8084
(e.g. after kubectl port-forward svc/<release>-search 9000:9000).`;

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

function adminToken(args: Args): string {
  const file = args.flags.get('token-file');
  const token = file ? readFileSync(file, 'utf8').trim() : process.env.OBSERVATORY_ADMIN_TOKEN?.trim();
  if (!token) throw new Error('no admin token: set OBSERVATORY_ADMIN_TOKEN or pass --token-file');
  return token;
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
  if (command === 'status') console.log(await status(args));
  else if (command === 'tail') {
    const stop = new AbortController();
    process.once('SIGINT', () => stop.abort());
    const url = (args.flags.get('search-url') ?? 'http://127.0.0.1:9000').replace(/\/$/, '');
    await tail(url, args.flags.get('query') ?? '', (line) => console.log(line), stop.signal);
  } else if (command === 'dlq' && sub === 'list') console.log(await listDeadLetters(dlq()));
  else if (command === 'dlq' && sub === 'replay') {
    if (args.flags.has('commit') && args.flags.has('dry-run'))
      throw new Error('--dry-run and --commit exclude each other');
    console.log(await replayDeadLetters(dlq(), args.flags.has('commit')));
  } else
    throw new Error(
      `unknown command ${JSON.stringify(args.command.join(' '))} (see kubectl observatory --help)`,
    );
}

main(process.argv.slice(2)).catch((error: Error) => {
  console.error(`kubectl observatory: ${error.message}`);
  process.exit(1);
});
