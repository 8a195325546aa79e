import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DiffFormat,
  describeFailure,
  forkHead,
  labelId,
  milestoneId,
  type PullRequest,
  PullRequestSort,
  parseOwner,
  pullRequestNumber,
  sameRepoHead,
  sameServerVersion,
} from '../src/index.js';
import { MAX_RESPONSE_ITEMS } from './gitea-server.js';
import {
  admin,
  branch,
  clientAs,
  commitFile,
  createBranch,
  createRepo,
  deleteFile,
  gitea,
  must,
  reviewer,
  type SeededRepo,
} from './seed.js';

const client = clientAs('admin');
let repo: SeededRepo;
let main: PullRequest;
const extra: PullRequest[] = [];

// A 1x1 PNG: a binary change for the diff `binary` flag.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

beforeAll(async () => {
  repo = await createRepo('pulls-demo');
  await createBranch(repo, 'develop');
  // feature: modifies README (changed), adds a file (added), deletes LICENSE (deleted), adds a PNG.
  await commitFile(repo, { branch: 'feature', path: 'README.md', content: '# pulls-demo\n\nchanged line\n' });
  await commitFile(repo, { branch: 'feature', path: 'src/app.txt', content: 'one\ntwo\nthree\n' });
  await deleteFile(repo, { branch: 'feature', path: 'LICENSE' });
  await commitFile(repo, { branch: 'feature', path: 'pixel.png', content: PNG });
  for (let i = 1; i <= 5; i++) {
    await commitFile(repo, { branch: `topic-${i}`, path: `topic-${i}.txt`, content: `topic ${i}\n` });
  }
});

afterAll(() => client.close());

describe('server version', () => {
  it('reads GET /version as an opaque string equal to the one the server reported at start', async () => {
    const v = must(await client.version());
    expect(v.raw).toBe(gitea().version);
    expect(sameServerVersion(v, { raw: gitea().version })).toBe(true);
  });
});

describe('creating and reading pull requests', () => {
  it('creates a pull request with labels, milestone, assignee and deadline, and reads it back', async () => {
    const due = new Date('2031-05-04T12:00:00Z');
    const created = await client.pulls.create(repo, {
      title: 'Feature work',
      head: sameRepoHead(branch('feature')),
      base: branch('main'),
      body: 'Adds things.',
      assignees: [admin, reviewer],
      labels: [labelId(repo.labels.bug), labelId(repo.labels.docs)],
      milestone: milestoneId(repo.milestone),
      dueDate: due,
    });
    main = must(created);
    expect(created.ok && created.context).toMatchObject({
      operation: 'pulls.create',
      method: 'POST',
      status: 201,
    });
    expect(main.state).toEqual({ kind: 'open' });
    expect(main.title).toBe('Feature work');
    expect(main.body).toBe('Adds things.');
    expect(main.author?.login).toBe(admin);
    expect(main.assignees.map((u) => u.login).sort()).toEqual([admin, reviewer].sort());
    expect(main.labels.map((l) => l.name).sort()).toEqual(['bug', 'docs']);
    expect(main.labels.find((l) => l.name === 'bug')?.color).toBe('ee0701');
    expect(main.milestone?.id).toBe(repo.milestone);
    expect(main.dueDate?.toISOString().slice(0, 10)).toBe('2031-05-04');
    expect(main.base.ref).toBe('main');
    expect(main.head.ref).toBe('feature');
    expect(main.head.repositoryId).toBe(main.base.repositoryId); // not a fork
    expect(main.head.sha).toMatch(/^[0-9a-f]{40}$/);
    expect(main.mergeBase).toMatch(/^[0-9a-f]{40}$/);
    expect(main.diffUrl).toMatch(/\/pulls\/\d+\.diff$/);
    expect(main.patchUrl).toMatch(/\/pulls\/\d+\.patch$/);
    expect(main.isDraft).toBe(false);
    expect(main.commentCount).toBe(0);

    const got = must(await client.pulls.get(repo, main.number));
    expect(got.id).toBe(main.id);
    expect(got.changedFileCount).toBe(4);
  });

  it('creates more pull requests, one of them a draft', async () => {
    for (let i = 1; i <= 5; i++) {
      const pr = must(
        await client.pulls.create(repo, {
          title: i === 5 ? `WIP: topic ${i}` : `Topic ${i}`,
          head: sameRepoHead(branch(`topic-${i}`)),
          base: branch(i === 4 ? 'develop' : 'main'),
          ...(i === 2 ? { labels: [labelId(repo.labels.docs)] } : {}),
        }),
      );
      extra.push(pr);
    }
    expect(extra[4]?.isDraft).toBe(true);
  });

  it('refuses a blank title before sending anything', async () => {
    const r = await client.pulls.create(repo, {
      title: '  ',
      head: sameRepoHead(branch('feature')),
      base: branch('main'),
    });
    expect(r).toEqual({
      ok: false,
      failure: { kind: 'validation', error: { field: 'title', message: 'must not be blank' } },
    });
  });

  it('answers 404 as a value for a missing pull request', async () => {
    const r = await client.pulls.get(repo, pullRequestNumber(9999));
    expect(r.ok).toBe(false);
    if (r.ok || r.failure.kind !== 'api') throw new Error('expected an api failure');
    expect(r.failure.status).toBe(404);
    expect(r.failure.context).toMatchObject({ operation: 'pulls.get', method: 'GET', status: 404 });
    expect(r.failure.context.uri).toBe(`${gitea().baseUri}/repos/${admin}/pulls-demo/pulls/9999`);
    expect(describeFailure(r.failure)).toContain('404');
  });
});

describe('listing, filtering and sorting', () => {
  const numbers = (items: readonly PullRequest[]) => items.map((p) => p.number).sort((a, b) => a - b);

  it('lists open pull requests by default and follows pages past the silent page-size cap', async () => {
    const first = must(await client.pulls.list(repo, {}, { pageSize: 50 }));
    // The server caps `limit` at MAX_RESPONSE_ITEMS without saying so.
    expect(first.items.length).toBe(MAX_RESPONSE_ITEMS);
    expect(first.totalCount).toBe(6);
    expect(first.next?.page).toBe(2);
    const all = must(await client.pulls.listAll(repo, {}, { pageSize: 50 }));
    expect(all).toHaveLength(6);
    expect(new Set(all.map((p) => p.number)).size).toBe(6);
  });

  it('iterates pages as an async iterator', async () => {
    const sizes: number[] = [];
    for await (const page of client.pulls.iterate(repo, { state: 'all' }, { pageSize: 2 })) {
      sizes.push(must(page).items.length);
    }
    expect(sizes).toEqual([2, 2, 2]);
  });

  it('filters by labels sent as a repeated parameter, by milestone, poster, base branch and head', async () => {
    // Gitea matches ANY of the labels and repeats a pull request per matching label; listAll dedupes.
    const either = must(
      await client.pulls.listAll(repo, { labels: [labelId(repo.labels.bug), labelId(repo.labels.docs)] }),
    );
    expect(numbers(either)).toEqual(numbers([main, extra[1] as PullRequest]));
    const page = must(
      await client.pulls.list(repo, { labels: [labelId(repo.labels.bug), labelId(repo.labels.docs)] }),
    );
    expect(page.context.uri).toContain(`labels=${repo.labels.bug}&labels=${repo.labels.docs}`);
    const docs = must(await client.pulls.listAll(repo, { labels: [labelId(repo.labels.docs)] }));
    expect(numbers(docs)).toEqual(numbers([main, extra[1] as PullRequest]));
    const ms = must(await client.pulls.listAll(repo, { milestone: milestoneId(repo.milestone) }));
    expect(numbers(ms)).toEqual([main.number]);
    const byPoster = must(await client.pulls.listAll(repo, { poster: admin }));
    expect(byPoster).toHaveLength(6);
    const none = must(await client.pulls.listAll(repo, { poster: reviewer }));
    expect(none).toHaveLength(0);
    const dev = must(await client.pulls.listAll(repo, { base: branch('develop') }));
    expect(numbers(dev)).toEqual([extra[3]?.number]);
    const head = must(await client.pulls.listAll(repo, { head: sameRepoHead(branch('topic-3')) }));
    expect(numbers(head)).toEqual([extra[2]?.number]);
    const owner = parseOwner(reviewer);
    if (!owner.ok) throw new Error('owner');
    const forkHeaded = must(
      await client.pulls.listAll(repo, { head: forkHead(owner.value, branch('topic-3')) }),
    );
    expect(forkHeaded).toHaveLength(0);
  });

  it('accepts each of the seven sort orders', async () => {
    const created = must(await client.pulls.listAll(repo, { sort: PullRequestSort.Oldest }));
    expect(created.map((p) => p.number)).toEqual(numbers(created));
    for (const sort of Object.values(PullRequestSort)) {
      const r = await client.pulls.listAll(repo, { state: 'all', sort });
      expect(r.ok, `${sort}: ${r.ok ? '' : describeFailure(r.failure)}`).toBe(true);
      expect(must(r)).toHaveLength(6);
    }
    // recentupdate and leastupdate are mirror images once one pull request is touched. Update times
    // have one-second resolution: wait past the second of the last creation so the order is strict.
    await new Promise((res) => setTimeout(res, 1100));
    must(await client.pulls.edit(repo, extra[0]!.number, { body: 'touched' }));
    const recent = must(await client.pulls.listAll(repo, { sort: PullRequestSort.RecentUpdate }));
    const least = must(await client.pulls.listAll(repo, { sort: PullRequestSort.LeastUpdate }));
    expect(recent[0]?.number).toBe(extra[0]?.number);
    expect(least.at(-1)?.number).toBe(extra[0]?.number);
  });
});

describe('editing', () => {
  it('changes nothing with an empty edit (PATCH answers 201)', async () => {
    const before = must(await client.pulls.get(repo, main.number));
    const r = await client.pulls.edit(repo, main.number, {});
    expect(r.ok && r.context.status).toBe(201);
    const after = must(r);
    expect(after.title).toBe(before.title);
    expect(after.labels).toHaveLength(2);
    expect(after.assignees).toHaveLength(2);
    expect(after.dueDate).toEqual(before.dueDate);
  });

  it('clears assignees and labels with empty lists and the deadline with unsetDueDate', async () => {
    const cleared = must(
      await client.pulls.edit(repo, main.number, { assignees: [], labels: [], unsetDueDate: true }),
    );
    expect(cleared.assignees).toEqual([]);
    expect(cleared.labels).toEqual([]);
    expect(cleared.dueDate).toBeUndefined();
    expect(cleared.milestone?.id).toBe(repo.milestone); // absent fields left alone
    const reread = must(await client.pulls.get(repo, main.number));
    expect(reread.assignees).toEqual([]);
    expect(reread.dueDate).toBeUndefined();
  });

  it('replaces lists, sets title, body and a new deadline, and retargets the base branch', async () => {
    const e = must(
      await client.pulls.edit(repo, main.number, {
        title: 'Feature work (edited)',
        body: 'New body',
        assignees: [reviewer],
        labels: [labelId(repo.labels.docs)],
        dueDate: new Date('2032-01-02T00:00:00Z'),
        base: branch('develop'),
        allowMaintainerEdit: false,
      }),
    );
    expect(e.title).toBe('Feature work (edited)');
    expect(e.body).toBe('New body');
    expect(e.assignees.map((u) => u.login)).toEqual([reviewer]);
    expect(e.labels.map((l) => l.name)).toEqual(['docs']);
    expect(e.dueDate?.toISOString().slice(0, 10)).toBe('2032-01-02');
    expect(e.base.ref).toBe('develop');
    expect(e.allowsMaintainerEdit).toBe(false);
    expect(must(await client.pulls.edit(repo, main.number, { base: branch('main') })).base.ref).toBe('main');
  });

  it('closes and reopens; closed listings include it, open ones do not', async () => {
    const closed = must(await client.pulls.edit(repo, extra[2]!.number, { state: 'closed' }));
    expect(closed.state.kind).toBe('closed');
    const open = must(await client.pulls.listAll(repo));
    expect(open.some((p) => p.number === closed.number)).toBe(false);
    const closedList = must(await client.pulls.listAll(repo, { state: 'closed' }));
    expect(closedList.map((p) => p.number)).toContain(closed.number);
    const reopened = must(await client.pulls.edit(repo, extra[2]!.number, { state: 'open' }));
    expect(reopened.state).toEqual({ kind: 'open' });
  });
});

describe('files, diff and patch', () => {
  it('lists changed files with their status and counts', async () => {
    const files = must(await client.pulls.allFiles(repo, main.number, { pageSize: 2 }));
    const byName = new Map(files.map((f) => [f.filename, f]));
    expect([...byName.keys()].sort()).toEqual(['LICENSE', 'README.md', 'pixel.png', 'src/app.txt']);
    expect(byName.get('src/app.txt')).toMatchObject({
      status: 'Added',
      additions: 3,
      deletions: 0,
      changes: 3,
    });
    expect(byName.get('LICENSE')?.status).toBe('Deleted');
    expect(byName.get('README.md')?.status).toBe('Changed');
    expect(byName.get('README.md')?.contentsUrl).toContain('/contents/README.md');
  });

  it('downloads the diff and the patch, with and without binary content', async () => {
    const diff = must(await client.pulls.diff(repo, main.number, { format: DiffFormat.Diff }));
    expect(diff).toContain('diff --git a/src/app.txt b/src/app.txt');
    expect(diff).toContain('+two');
    expect(diff).not.toContain('GIT binary patch');
    const binary = must(
      await client.pulls.diff(repo, main.number, { format: DiffFormat.Diff, includeBinary: true }),
    );
    expect(binary).toContain('GIT binary patch');
    expect(binary.length).toBeGreaterThan(diff.length);
    const patch = must(await client.pulls.diff(repo, main.number, { format: DiffFormat.Patch }));
    expect(patch).toMatch(/^From [0-9a-f]{40} /);
    expect(patch).toContain('Subject: [PATCH');
  });

  it('abandons a diff past maxResponseBodyBytes (the bound of textual responses) as response-too-large', async () => {
    const small = clientAs('admin', { maxResponseBodyBytes: 64, maxDownloadBodyBytes: 1_000_000 });
    const r = await small.pulls.diff(repo, main.number, { format: DiffFormat.Diff });
    small.close();
    expect(r.ok).toBe(false);
    if (r.ok || r.failure.kind !== 'transport') throw new Error('expected transport failure');
    expect(r.failure.cause).toBe('response-too-large');
    expect(r.failure.context.operation).toBe('pulls.diff');
    expect(r.failure.context.status).toBe(200);
  });

  it('reports a JSON body past maxResponseBodyBytes as response-too-large', async () => {
    const small = clientAs('admin', { maxResponseBodyBytes: 512 });
    const r = await small.pulls.get(repo, main.number);
    small.close();
    expect(!r.ok && r.failure.kind === 'transport' && r.failure.cause).toBe('response-too-large');
  });
});
