import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeJsonText, formatJsonPath, jsonPath, jsonPathEquals, runDecoder } from './json.js';
import {
  decodeChangedFile,
  decodeLabel,
  decodeMilestone,
  decodePullRequest,
  decodeRepository,
  decodeReview,
  decodeReviewComment,
  decodeServerVersion,
  decodeUser,
  sameServerVersion,
} from './models.js';
import { decodeApiErrorBody } from './result.js';

/** Payloads captured from a live Gitea 1.26.0 (see README, "Fixtures"). */
const live = JSON.parse(readFileSync(new URL('./__fixtures__/gitea-1.26.json', import.meta.url), 'utf8'));
const clone = <T>(v: T): T => structuredClone(v);

function decodeOk<T>(decoder: Parameters<typeof runDecoder<T>>[0], value: unknown): T {
  const r = runDecoder(decoder, value);
  if (!r.ok) throw new Error(`${formatJsonPath(r.problem.path)}: ${r.problem.message}`);
  return r.value;
}

describe('PullRequest decoding (captured payloads)', () => {
  it('decodes an open pull request with its embedded user, label, milestone and repository', () => {
    const pr = decodeOk(decodePullRequest, live.pullRequestOpen);
    expect(pr.state).toEqual({ kind: 'open' });
    expect(pr.number).toBe(1);
    expect(pr.title).toBe('Fixture PR');
    expect(pr.body).toBe('Body');
    expect(pr.author?.login).toBe('forge-admin');
    expect(pr.assignees.map((u) => u.login)).toEqual(['forge-reviewer']);
    expect(pr.labels[0]).toMatchObject({ name: 'bug', color: 'ee0701', description: 'Something is broken' });
    expect(pr.milestone).toMatchObject({ title: 'v1', state: 'open' });
    expect(pr.base.repository?.fullName).toBe('forge-admin/fx');
    expect(pr.head.ref).toBe('feat');
    expect(pr.head.repositoryId).toBe(pr.base.repositoryId);
    expect(pr.dueDate).toBeInstanceOf(Date);
    expect(pr.isMergeable).toBe(true);
    expect(pr.changedFileCount).toBe(1);
  });

  it('derives merged from the merge evidence first although the wire says closed', () => {
    expect(live.pullRequestMerged.state).toBe('closed');
    const pr = decodeOk(decodePullRequest, live.pullRequestMerged);
    if (pr.state.kind !== 'merged') throw new Error('not merged');
    expect(pr.state.mergedBy?.login).toBe('forge-admin');
    expect(pr.state.mergeCommitSha).toMatch(/^[0-9a-f]{40}$/);
    expect(pr.state.mergedAt).toBeInstanceOf(Date);
    expect(pr.state.closedAt).toBeInstanceOf(Date);
  });

  it('keeps a listing without the merging account as merged, with that piece absent', () => {
    expect(live.pullRequestListed.merged_by).toBeNull();
    const pr = decodeOk(decodePullRequest, live.pullRequestListed);
    expect(pr.state.kind).toBe('merged');
    expect(pr.state.kind === 'merged' && pr.state.mergedBy).toBeUndefined();
  });

  it('treats any single piece of merge evidence as merged', () => {
    const p = clone(live.pullRequestOpen);
    p.state = 'closed';
    p.merge_commit_sha = 'abc1234';
    const pr = decodeOk(decodePullRequest, p);
    expect(pr.state).toEqual({ kind: 'merged', mergeCommitSha: 'abc1234' });
  });

  it('reads closed without merge evidence as closed', () => {
    const p = clone(live.pullRequestOpen);
    p.state = 'closed';
    p.closed_at = '2030-01-01T00:00:00Z';
    expect(decodeOk(decodePullRequest, p).state).toEqual({
      kind: 'closed',
      closedAt: new Date('2030-01-01T00:00:00Z'),
    });
  });

  it('normalises null lists to empty, null objects and empty text to absent', () => {
    const p = clone(live.pullRequestOpen);
    p.assignees = null;
    p.requested_reviewers = null;
    p.labels = null;
    p.milestone = null;
    p.user = null;
    p.body = '';
    p.due_date = null;
    p.comments = undefined;
    p.mergeable = undefined;
    const pr = decodeOk(decodePullRequest, p);
    expect(pr.assignees).toEqual([]);
    expect(pr.requestedReviewers).toEqual([]);
    expect(pr.labels).toEqual([]);
    expect(pr.milestone).toBeUndefined();
    expect(pr.author).toBeUndefined();
    expect('body' in pr).toBe(false);
    expect(pr.dueDate).toBeUndefined();
    expect(pr.commentCount).toBe(0);
    expect(pr.isMergeable).toBeUndefined();
  });

  it('drops only the ref of a branch whose ref fails branch-name validation', () => {
    const p = clone(live.pullRequestOpen);
    p.head.ref = 'bad..ref';
    const pr = decodeOk(decodePullRequest, p);
    expect(pr.head.ref).toBeUndefined();
    expect(pr.head.sha).toBe(live.pullRequestOpen.head.sha);
    p.head.ref = 'refs/pull/1/head';
    expect(decodeOk(decodePullRequest, p).head.ref).toBe('refs/pull/1/head');
  });

  it('reports the JSON path of a value of the wrong type', () => {
    const p = clone(live.pullRequestOpen);
    p.head.repo_id = '7';
    const r = runDecoder(decodePullRequest, p);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(formatJsonPath(r.problem.path)).toBe('$.head.repo_id');
    expect(jsonPathEquals(r.problem.path, jsonPath('head', 'repo_id'))).toBe(true);
    expect(r.problem.message).toBe('expected an integer, got string');
  });

  it('reports array positions in the path', () => {
    const p = clone(live.pullRequestOpen);
    p.labels[0].id = null;
    const r = runDecoder(decodePullRequest, p);
    expect(!r.ok && formatJsonPath(r.problem.path)).toBe('$.labels[0].id');
  });

  it('refuses an unknown pull request state at $.state', () => {
    const p = clone(live.pullRequestOpen);
    p.state = 'reopened';
    const r = runDecoder(decodePullRequest, p);
    expect(!r.ok && formatJsonPath(r.problem.path)).toBe('$.state');
  });

  it('refuses ids beyond the safe integer range rather than rounding them', () => {
    const r = decodeJsonText(
      decodePullRequest,
      JSON.stringify(live.pullRequestOpen).replace('"id":1,', '"id":9007199254740993,'),
    );
    expect(!r.ok && r.problem.message).toBe('expected a safe integer');
  });

  it('reports text that is not JSON at $', () => {
    const r = decodeJsonText(decodePullRequest, '<html>');
    expect(!r.ok && formatJsonPath(r.problem.path)).toBe('$');
  });
});

describe('ChangedFile decoding', () => {
  it('decodes the captured files listing', () => {
    const [f] = decodeOk(
      (v, p) => (v as unknown[]).map((x, i) => decodeChangedFile(x, { segments: [...p.segments, i] })),
      live.changedFiles,
    );
    expect(f).toMatchObject({ filename: 'a.txt', status: 'Added', additions: 2, deletions: 0, changes: 2 });
    expect(f?.previousFilename).toBeUndefined();
    expect(f?.rawUrl).toContain('/raw/');
  });

  it('maps the wire value changed, keeps the server total, and drops an unknown status', () => {
    const base = clone(live.changedFiles[0]);
    expect(decodeOk(decodeChangedFile, { ...base, status: 'changed' }).status).toBe('Changed');
    expect(decodeOk(decodeChangedFile, { ...base, changes: 99 }).changes).toBe(99);
    const unknown = decodeOk(decodeChangedFile, { ...base, status: 'typechange' });
    expect(unknown.status).toBeUndefined();
    expect(decodeOk(decodeChangedFile, { ...base, additions: undefined }).additions).toBe(0);
    expect(
      decodeOk(decodeChangedFile, { ...base, status: 'renamed', previous_filename: 'old.txt' })
        .previousFilename,
    ).toBe('old.txt');
  });
});

describe('Review decoding', () => {
  it('decodes a pending review', () => {
    const r = decodeOk(decodeReview, live.reviewPending);
    expect(r).toMatchObject({
      state: 'Pending',
      body: 'draft',
      commentCount: 1,
      isDismissed: false,
      isStale: false,
    });
    expect(r.author?.login).toBe('forge-reviewer');
    expect(r.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it('decodes a review request row: state RequestReview, no commit, no count', () => {
    const [r] = live.reviewRequest.map((x: unknown) => decodeOk(decodeReview, x));
    expect(r.state).toBe('RequestReview');
    expect(r.commit).toBeUndefined();
    expect(r.body).toBeUndefined();
    expect(r.commentCount).toBe(0);
  });

  it('reads an empty or unknown state as absent', () => {
    expect(decodeOk(decodeReview, { ...live.reviewPending, state: '' }).state).toBeUndefined();
    expect(decodeOk(decodeReview, { ...live.reviewPending, state: 'SOMETHING_NEW' }).state).toBeUndefined();
    expect(decodeOk(decodeReview, { ...live.reviewPending, state: 'REQUEST_CHANGES' }).state).toBe(
      'RequestChanges',
    );
  });

  it('decodes a team review request row without a user', () => {
    const r = decodeOk(decodeReview, { ...live.reviewRequest[0], user: null, team: { id: 3, name: 'core' } });
    expect(r.author).toBeUndefined();
  });
});

describe('ReviewComment decoding', () => {
  it('decodes the captured remark with its sentinels', () => {
    const c = decodeOk(decodeReviewComment, live.reviewComments[0]);
    expect(c).toMatchObject({
      body: 'why?',
      path: 'a.txt',
      position: 2,
      originalPosition: 0,
      extraLinesCount: 0,
    });
    expect(c.reviewId).toBe(live.reviewPending.id);
    expect(c.diffHunk).toContain('@@');
    expect(c.resolver).toBeUndefined();
  });

  it('reads review id 0 as absent', () => {
    const c = decodeOk(decodeReviewComment, { ...live.reviewComments[0], pull_request_review_id: 0 });
    expect(c.reviewId).toBeUndefined();
  });
});

describe('other models', () => {
  it('decodes user, label, milestone and repository shapes', () => {
    const pr = live.pullRequestOpen;
    expect(decodeOk(decodeUser, pr.user)).toMatchObject({ login: 'forge-admin', isAdmin: true });
    expect(decodeOk(decodeLabel, pr.labels[0])).toMatchObject({ isExclusive: false, isArchived: false });
    expect(decodeOk(decodeMilestone, pr.milestone).dueOn).toEqual(new Date('2031-01-01T00:00:00Z'));
    expect(decodeOk(decodeMilestone, { ...pr.milestone, state: 'weird' }).state).toBeUndefined();
    expect(decodeOk(decodeRepository, pr.base.repo)).toMatchObject({
      name: 'fx',
      isPrivate: false,
      defaultBranch: 'main',
    });
  });

  it('keeps the server version opaque and compares it only for equality', () => {
    const v = decodeOk(decodeServerVersion, live.version);
    expect(v.raw).toBe('1.26.0');
    const dev = decodeOk(decodeServerVersion, { version: '1.27.0+dev-123-gabcdef' });
    expect(sameServerVersion(v, dev)).toBe(false);
    expect(sameServerVersion(v, { raw: '1.26.0' })).toBe(true);
    const blank = runDecoder(decodeServerVersion, { version: ' ' });
    expect(!blank.ok && formatJsonPath(blank.problem.path)).toBe('$.version');
  });
});

describe('ApiErrorBody', () => {
  it('decodes the captured 404 body', () => {
    expect(decodeApiErrorBody(live.error404)).toEqual({
      message: 'not found',
      url: expect.stringContaining('/api/swagger'),
      errors: [],
    });
  });

  it('never fails: unparseable or odd bodies become the empty value or what could be read', () => {
    expect(decodeApiErrorBody('')).toEqual({ errors: [] });
    expect(decodeApiErrorBody('<html>502</html>')).toEqual({ errors: [] });
    expect(decodeApiErrorBody('[1,2]')).toEqual({ errors: [] });
    expect(decodeApiErrorBody('{"message": 5, "url": null}')).toEqual({ errors: [] });
    // the merge 409 body is not of the usual shape
    expect(decodeApiErrorBody('{"Message":"conflict","StdOut":"x"}')).toEqual({ errors: [] });
    const withErrors = decodeApiErrorBody(
      '{"message":"bad","errors":["title is required",{"field":"head","message":"x"},7]}',
    );
    expect(withErrors.message).toBe('bad');
    expect(withErrors.errors).toEqual([
      { message: 'title is required', raw: 'title is required' },
      { field: 'head', message: 'x', raw: '{"field":"head","message":"x"}' },
    ]);
  });
});
