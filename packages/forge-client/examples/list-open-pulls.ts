/**
 * Lists the open pull requests of a repository with their review state, then prints the server
 * version. Runs against any Gitea/Forgejo:
 *
 *   FORGE_URL=https://gitea.example.org/api/v1 FORGE_TOKEN=... FORGE_REPO=owner/name npm run example
 *
 * (from packages/forge-client; the script is `node --import tsx examples/list-open-pulls.ts`).
 *
 * Without FORGE_REPO it exits with a usage line; without FORGE_TOKEN it reads anonymously.
 */
import {
  describeFailure,
  ForgeClient,
  ForgeConfigError,
  type PullRequest,
  ReviewState,
  tokenAuth,
} from '../src/index.js';

const [owner, repo] = (process.env.FORGE_REPO ?? '').split('/');
if (!owner || !repo) {
  console.error('usage: FORGE_URL=<api root> [FORGE_TOKEN=<token>] FORGE_REPO=<owner/name> list-open-pulls');
  process.exit(2);
}

let client: ForgeClient;
try {
  client = ForgeClient.create({
    baseUri: process.env.FORGE_URL ?? 'https://gitea.com/api/v1',
    userAgent: 'forge-client-example/0.1',
    ...(process.env.FORGE_TOKEN ? { auth: tokenAuth(process.env.FORGE_TOKEN) } : {}),
    connectTimeoutMs: 5_000,
    readTimeoutMs: 15_000,
  });
} catch (err) {
  if (err instanceof ForgeConfigError) {
    console.error(`configuration: ${err.error.field} ${err.error.message}`);
    process.exit(2);
  }
  throw err;
}
console.error(`using ${client.config}`); // safe: the token prints as [redacted]

function line(pr: PullRequest, approvals: number): string {
  const draft = pr.isDraft ? ' [draft]' : '';
  return `#${pr.number} ${pr.title}${draft} (${pr.head.label} -> ${pr.base.label}, ${approvals} approval(s))`;
}

let exitCode = 0;
for await (const page of client.pulls.iterate({ owner, repo })) {
  if (!page.ok) {
    console.error(describeFailure(page.failure));
    exitCode = 1;
    break;
  }
  for (const pr of page.value.items) {
    const reviews = await client.reviews.listAll({ owner, repo }, pr.number);
    // Review requests are rows too: count only live approvals.
    const approvals = reviews.ok
      ? reviews.value.filter((r) => r.state === ReviewState.Approved && !r.isDismissed).length
      : 0;
    console.log(line(pr, approvals));
  }
}

const version = await client.version();
console.log(version.ok ? `server ${version.value.raw}` : describeFailure(version.failure));
client.close();
process.exit(exitCode);
