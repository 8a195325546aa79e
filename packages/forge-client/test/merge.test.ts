import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MergeStyle,
  type PullRequest,
  type PullRequestNumber,
  sameRepoHead,
  UpdateStyle,
} from '../src/index.js';
import {
  api,
  apiStatus,
  branch,
  branchExists,
  branchSha,
  clientAs,
  commitFile,
  createRepo,
  must,
  type SeededRepo,
  waitMergeable,
} from './seed.js';

const client = clientAs('admin');
let repo: SeededRepo;

/** A fresh branch off the current `main` with one commit, and its pull request. */
async function openPull(name: string, title = `Merge ${name}`): Promise<PullRequest> {
  await commitFile(repo, { branch: name, path: `${name}.txt`, content: `${name}\n` });
  return must(
    await client.pulls.create(repo, { title, head: sameRepoHead(branch(name)), base: branch('main') }),
  );
}

async function mergeWhenReady(n: PullRequestNumber, style: MergeStyle, extra: { headCommit?: string } = {}) {
  const ready = await waitMergeable(client, repo, n);
  return client.pulls.merge(repo, n, { style, headCommit: extra.headCommit ?? ready.head.sha });
}

beforeAll(async () => {
  repo = await createRepo('merge-demo');
});

afterAll(() => client.close());

describe('merging', () => {
  for (const style of [
    MergeStyle.Merge,
    MergeStyle.Rebase,
    MergeStyle.RebaseMerge,
    MergeStyle.Squash,
    MergeStyle.FastForwardOnly,
  ]) {
    it(`merges with the ${style} style and reads the merge evidence back`, async () => {
      const pr = await openPull(`style-${style.toLowerCase()}`);
      const merged = await mergeWhenReady(pr.number, style);
      expect(merged.ok, merged.ok ? '' : JSON.stringify(merged.failure)).toBe(true);
      expect(must(merged)).toEqual({ kind: 'merged' });
      const after = must(await client.pulls.get(repo, pr.number));
      if (after.state.kind !== 'merged') throw new Error(`state ${after.state.kind}`);
      expect(after.state.mergedAt).toBeInstanceOf(Date);
      expect(after.state.mergeCommitSha).toMatch(/^[0-9a-f]{40}$/);
      expect(after.state.mergedBy?.login).toBe(repo.owner);
      // Listed under closed, as the wire reports it.
      const closed = must(await client.pulls.listAll(repo, { state: 'closed' }));
      expect(closed.find((p) => p.number === pr.number)?.state.kind).toBe('merged');
    });
  }

  it('keeps the head branch unless asked, even where the repository deletes merged branches by default', async () => {
    // Gitea falls back to the repository's setting when the key is absent; the library sends false.
    await api('PATCH', `/repos/${repo.owner}/${repo.repo}`, { default_delete_branch_after_merge: true });
    try {
      const kept = await openPull('keep-head');
      const ready = await waitMergeable(client, repo, kept.number);
      expect(
        must(
          await client.pulls.merge(repo, kept.number, {
            style: MergeStyle.Merge,
            headCommit: ready.head.sha,
          }),
        ),
      ).toEqual({ kind: 'merged' });
      expect(await branchExists(repo, 'keep-head')).toBe(true);

      const dropped = await openPull('drop-head');
      const ready2 = await waitMergeable(client, repo, dropped.number);
      const r = await client.pulls.merge(repo, dropped.number, {
        style: MergeStyle.Merge,
        headCommit: ready2.head.sha,
        deleteBranchAfterMerge: true,
      });
      expect(must(r)).toEqual({ kind: 'merged' });
      expect(await branchExists(repo, 'drop-head')).toBe(false);
    } finally {
      await api('PATCH', `/repos/${repo.owner}/${repo.repo}`, { default_delete_branch_after_merge: false });
    }
  });

  it('records a manual merge against a commit already on the base branch', async () => {
    const pr = await openPull('style-manual');
    await waitMergeable(client, repo, pr.number);
    const onMain = await branchSha(repo, 'main');
    const r = await client.pulls.merge(repo, pr.number, {
      style: MergeStyle.ManuallyMerged,
      mergedCommit: onMain,
    });
    expect(must(r)).toEqual({ kind: 'merged' });
    const after = must(await client.pulls.get(repo, pr.number));
    expect(after.state.kind === 'merged' && after.state.mergeCommitSha).toBe(onMain);
  });

  it('schedules a merge when checks are pending: success that does not mean merged (201)', async () => {
    const pr = await openPull('auto-merge');
    await waitMergeable(client, repo, pr.number);
    const sha = await branchSha(repo, 'auto-merge');
    await api('POST', `/repos/${repo.owner}/${repo.repo}/statuses/${sha}`, {
      state: 'pending',
      context: 'ci',
    });
    const r = await client.pulls.merge(repo, pr.number, {
      style: MergeStyle.Merge,
      mergeWhenChecksSucceed: true,
      headCommit: sha,
    });
    expect(r.ok && r.context.status).toBe(201);
    expect(must(r)).toEqual({ kind: 'scheduled' });
    expect(must(await client.pulls.get(repo, pr.number)).state.kind).toBe('open');
    // The check passes: the server merges on its own.
    await api('POST', `/repos/${repo.owner}/${repo.repo}/statuses/${sha}`, {
      state: 'success',
      context: 'ci',
    });
    let state = 'open';
    for (let i = 0; i < 120 && state !== 'merged'; i++) {
      await new Promise((res) => setTimeout(res, 250));
      state = must(await client.pulls.get(repo, pr.number)).state.kind;
    }
    expect(state).toBe('merged');
  });

  it('refuses a merge whose head commit is not the branch head (409), which makes a repeat safe', async () => {
    const pr = await openPull('stale-head');
    const r = await mergeWhenReady(pr.number, MergeStyle.Merge, { headCommit: 'a'.repeat(40) });
    expect(apiStatus(r)).toBe(409);
    expect(must(await client.pulls.get(repo, pr.number)).state.kind).toBe('open');
  });

  it('answers 405 for an already merged pull request, a draft, and a style the repository forbids', async () => {
    const pr = await openPull('twice');
    expect(must(await mergeWhenReady(pr.number, MergeStyle.Merge))).toEqual({ kind: 'merged' });
    const again = await client.pulls.merge(repo, pr.number, { style: MergeStyle.Merge });
    expect(apiStatus(again)).toBe(405);
    expect(again.ok || again.failure.kind !== 'api' || again.failure.body.message).toBe(
      'The PR is already merged',
    );

    const draft = await openPull('draft', 'WIP: not yet');
    expect(draft.isDraft).toBe(true);
    // Until the server has checked the draft it answers 405 "Please try again later"; then the WIP refusal.
    let message: string | undefined;
    for (let i = 0; i < 120; i++) {
      const r = await client.pulls.merge(repo, draft.number, { style: MergeStyle.Merge });
      expect(apiStatus(r)).toBe(405);
      message = !r.ok && r.failure.kind === 'api' ? r.failure.body.message : undefined;
      if (message !== 'Please try again later') break;
      await new Promise((res) => setTimeout(res, 250));
    }
    expect(message).toBe('Work in progress PRs cannot be merged');

    await api('PATCH', `/repos/${repo.owner}/${repo.repo}`, { allow_squash_merge: false });
    const forbidden = await openPull('forbidden');
    expect(apiStatus(await mergeWhenReady(forbidden.number, MergeStyle.Squash))).toBe(405);
    await api('PATCH', `/repos/${repo.owner}/${repo.repo}`, { allow_squash_merge: true });
  });

  it('never retries a merge, even when the status is one the policy retries for safe methods', async () => {
    const pr = await openPull('no-retry');
    // 405 is not retryable anyway; the point is attempts === 1 for POST whatever happens.
    const r = await client.pulls.merge(repo, pr.number, {
      style: MergeStyle.Merge,
      headCommit: 'b'.repeat(40),
    });
    expect(r.ok).toBe(false);
    if (!r.ok && r.failure.kind !== 'validation') expect(r.failure.context.attempts).toBe(1);
  });

  it('refuses an unknown merge style before sending (Gitea itself answers 422 for one)', async () => {
    const pr = await openPull('unknown-style');
    const r = await client.pulls.merge(repo, pr.number, { style: 'Octopus' as MergeStyle });
    expect(r).toEqual({
      ok: false,
      failure: { kind: 'validation', error: { field: 'style', message: 'unknown merge style' } },
    });
    const raw = await client.request({
      method: 'POST',
      path: `/repos/${repo.owner}/${repo.repo}/pulls/${pr.number}/merge`,
      body: { Do: 'octopus' },
    });
    expect(apiStatus(raw)).toBe(422);
  });
});

describe('updating a head branch that is behind its base', () => {
  async function behindPull(name: string): Promise<PullRequest> {
    const pr = await openPull(name);
    // Move main forward so that the pull request's head is behind.
    await commitFile(repo, { branch: 'main', path: `main-after-${name}.txt`, content: 'ahead\n' });
    return pr;
  }

  it('updates by merge: a merge commit on the head, the old head kept as a parent', async () => {
    const pr = await behindPull('update-merge');
    const before = await branchSha(repo, 'update-merge');
    await waitMergeable(client, repo, pr.number);
    const r = await client.pulls.update(repo, pr.number, UpdateStyle.Merge);
    expect(r.ok && r.context.status).toBe(200);
    expect(r.ok && r.context.uri).toContain('style=merge');
    const after = await branchSha(repo, 'update-merge');
    expect(after).not.toBe(before);
    const commit = await api<{ parents: { sha: string }[] }>(
      'GET',
      `/repos/${repo.owner}/${repo.repo}/git/commits/${after}`,
    );
    expect(commit.parents.map((p) => p.sha)).toContain(before);
  });

  it('updates by rebase: the head commit is replayed with a new sha and a single parent', async () => {
    const pr = await behindPull('update-rebase');
    const before = await branchSha(repo, 'update-rebase');
    await waitMergeable(client, repo, pr.number);
    const r = await client.pulls.update(repo, pr.number, UpdateStyle.Rebase);
    expect(r.ok, r.ok ? '' : JSON.stringify(r.failure)).toBe(true);
    expect(r.ok && r.context.uri).toContain('style=rebase');
    const after = await branchSha(repo, 'update-rebase');
    expect(after).not.toBe(before);
    const commit = await api<{ parents: { sha: string }[] }>(
      'GET',
      `/repos/${repo.owner}/${repo.repo}/git/commits/${after}`,
    );
    expect(commit.parents).toHaveLength(1);
    expect(commit.parents[0]?.sha).toBe(await branchSha(repo, 'main'));
  });
});
