/**
 * Seeding through Gitea's own API (plain fetch, not the library under test): repositories,
 * collaborators, labels, milestones, and branches made of commits from the contents API.
 */

import { inject } from 'vitest';
import {
  type BranchName,
  ForgeClient,
  type PullRequestNumber,
  parseBranchName,
  type RepoRef,
  tokenAuth,
} from '../src/index.js';
import { ADMIN, REVIEWER } from './gitea-server.js';

export const admin = ADMIN.username;
export const reviewer = REVIEWER.username;

export function gitea() {
  return inject('gitea');
}

/** A client as the repository owner (admin) or as the second account (reviewer). */
export function clientAs(
  who: 'admin' | 'reviewer',
  extra: Partial<Parameters<typeof ForgeClient.create>[0]> = {},
) {
  const g = gitea();
  return ForgeClient.create({
    baseUri: g.baseUri,
    userAgent: 'forge-client-tests/0.1',
    auth: tokenAuth(who === 'admin' ? g.adminToken : g.reviewerToken),
    retry: { maxAttempts: 2, initialDelayMs: 50 },
    ...extra,
  });
}

async function api<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  token = gitea().adminToken,
): Promise<T> {
  const res = await fetch(`${gitea().baseUri}${path}`, {
    method,
    headers: {
      authorization: `token ${token}`,
      'content-type': 'application/json',
      accept: 'application/json',
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`seed ${method} ${path} -> ${res.status}: ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export function branch(name: string): BranchName {
  const b = parseBranchName(name);
  if (!b.ok) throw new Error(`bad branch ${name}`);
  return b.value;
}

export interface SeededRepo extends RepoRef {
  readonly id: number;
  readonly labels: { bug: number; docs: number };
  readonly milestone: number;
}

/** A repository owned by the admin, with README and LICENSE on `main`, the reviewer as writer. */
export async function createRepo(name: string): Promise<SeededRepo> {
  const repo = await api<{ id: number }>('POST', '/user/repos', {
    name,
    auto_init: true,
    default_branch: 'main',
    readme: 'Default',
    license: 'MIT',
  });
  await api('PATCH', `/repos/${admin}/${name}`, {
    allow_manual_merge: true,
    allow_merge_commits: true,
    allow_rebase: true,
    allow_rebase_explicit: true,
    allow_squash_merge: true,
    allow_fast_forward_only_merge: true,
  });
  await api('PUT', `/repos/${admin}/${name}/collaborators/${reviewer}`, { permission: 'write' });
  const bug = await api<{ id: number }>('POST', `/repos/${admin}/${name}/labels`, {
    name: 'bug',
    color: '#ee0701',
  });
  const docs = await api<{ id: number }>('POST', `/repos/${admin}/${name}/labels`, {
    name: 'docs',
    color: '00aabb',
  });
  const ms = await api<{ id: number }>('POST', `/repos/${admin}/${name}/milestones`, { title: 'v1' });
  return { owner: admin, repo: name, id: repo.id, labels: { bug: bug.id, docs: docs.id }, milestone: ms.id };
}

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

/** Adds (or replaces) a file; creates `branch` from `from` when it does not exist yet. */
export async function commitFile(
  r: RepoRef,
  opts: { branch: string; from?: string; path: string; content: string | Buffer; message?: string },
): Promise<string> {
  const exists = await branchExists(r, opts.branch);
  let sha: string | undefined;
  const lookupRef = exists ? opts.branch : (opts.from ?? 'main');
  const current = await fetch(
    `${gitea().baseUri}/repos/${r.owner}/${r.repo}/contents/${opts.path}?ref=${encodeURIComponent(lookupRef)}`,
    { headers: { authorization: `token ${gitea().adminToken}` } },
  );
  if (current.ok) sha = ((await current.json()) as { sha: string }).sha;
  else await current.text();
  const body = {
    content: b64(opts.content),
    message: opts.message ?? `change ${opts.path}`,
    ...(exists ? { branch: opts.branch } : { branch: opts.from ?? 'main', new_branch: opts.branch }),
    ...(sha ? { sha } : {}),
  };
  const out = await api<{ commit: { sha: string } }>(
    sha ? 'PUT' : 'POST',
    `/repos/${r.owner}/${r.repo}/contents/${opts.path}`,
    body,
  );
  return out.commit.sha;
}

export async function deleteFile(r: RepoRef, opts: { branch: string; path: string }): Promise<void> {
  const cur = await api<{ sha: string }>(
    'GET',
    `/repos/${r.owner}/${r.repo}/contents/${opts.path}?ref=${opts.branch}`,
  );
  await api('DELETE', `/repos/${r.owner}/${r.repo}/contents/${opts.path}`, {
    sha: cur.sha,
    branch: opts.branch,
    message: `delete ${opts.path}`,
  });
}

export async function branchExists(r: RepoRef, name: string): Promise<boolean> {
  const res = await fetch(
    `${gitea().baseUri}/repos/${r.owner}/${r.repo}/branches/${encodeURIComponent(name)}`,
    {
      headers: { authorization: `token ${gitea().adminToken}` },
    },
  );
  await res.text();
  return res.ok;
}

export async function createBranch(r: RepoRef, name: string, from = 'main'): Promise<void> {
  await api('POST', `/repos/${r.owner}/${r.repo}/branches`, { new_branch_name: name, old_ref_name: from });
}

export async function branchSha(r: RepoRef, name: string): Promise<string> {
  const b = await api<{ commit: { id: string } }>(
    'GET',
    `/repos/${r.owner}/${r.repo}/branches/${encodeURIComponent(name)}`,
  );
  return b.commit.id;
}

/** Waits until the server has computed mergeability (merging earlier answers 405). */
export async function waitMergeable(
  client: ForgeClient,
  r: RepoRef,
  n: PullRequestNumber,
  timeoutMs = 30_000,
) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const pr = await client.pulls.get(r, n);
    if (pr.ok && pr.value.isMergeable === true) return pr.value;
    if (Date.now() > until) throw new Error(`pull ${n} not mergeable in time`);
    await new Promise((res) => setTimeout(res, 250));
  }
}

/** The HTTP status of an api failure, `'ok'` for a success, or the failure kind. */
export function apiStatus(
  r: { ok: true } | { ok: false; failure: { kind: string; status?: number } },
): number | string {
  if (r.ok) return 'ok';
  return r.failure.kind === 'api' && r.failure.status !== undefined ? r.failure.status : r.failure.kind;
}

/** Unwraps a result in a test, failing with the described failure. */
export function must<T>(r: { ok: true; value: T } | { ok: false; failure: unknown }): T {
  if (!r.ok) throw new Error(`expected success, got ${JSON.stringify(r.failure)}`);
  return r.value;
}

export { api };
