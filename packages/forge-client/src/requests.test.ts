import { describe, expect, it } from 'vitest';
import { MergeStyle, PullRequestSort, ReviewState } from './enums.js';
import { labelId, milestoneId } from './ids.js';
import {
  encodeCreatePullRequest,
  encodeCreateReview,
  encodeDiffRequest,
  encodeDismissReview,
  encodeEditPullRequest,
  encodeMergePullRequest,
  encodePullRequestQuery,
  encodeReviewRequest,
  encodeSubmitReview,
  forkHead,
  headParts,
  type PullRequestHead,
  sameRepoHead,
  validateNewReviewComment,
} from './requests.js';
import { type BranchName, type Owner, parseBranchName, parseOwner, parseRepoName } from './validation.js';

const value = <T>(r: { ok: true; value: T } | { ok: false; error: unknown }): T => {
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.value;
};
const error = (r: { ok: boolean; error?: unknown }) => (r.ok ? undefined : r.error);
const br = (s: string) => value(parseBranchName(s));
const paging = { page: 1, pageSize: 30 };

describe('PullRequestHead', () => {
  it('is a bare branch for the same repository and owner:branch for a fork', () => {
    expect(String(sameRepoHead(br('feature/x')))).toBe('feature/x');
    expect(String(forkHead(value(parseOwner('alice')), br('fix-1')))).toBe('alice:fix-1');
    expect(JSON.stringify({ head: forkHead(value(parseOwner('alice')), br('fix-1')) })).toBe(
      '{"head":"alice:fix-1"}',
    );
  });

  it('keeps its validated parts, so nothing ever parses the wire string', () => {
    expect(headParts(sameRepoHead(br('feature/x')))).toEqual({ branch: 'feature/x' });
    expect(headParts(forkHead(value(parseOwner('alice')), br('fix-1')))).toEqual({
      owner: 'alice',
      branch: 'fix-1',
    });
    expect(headParts('alice:fix-1')).toBeUndefined();
  });

  it('refuses a head from an untyped caller that is a plain string or has invalid parts', () => {
    const create = (head: unknown) =>
      error(encodeCreatePullRequest({ title: 'T', head: head as PullRequestHead, base: br('main') }));
    expect(create('alice:fix-1')).toEqual({
      field: 'head',
      message: 'must be built from a validated branch name',
    });
    expect(create(sameRepoHead('a..b' as BranchName))).toMatchObject({ field: 'head' });
    expect(create(forkHead('no good' as Owner, br('x')))).toMatchObject({ field: 'head' });
    expect(error(encodePullRequestQuery({ head: 'x' as unknown as PullRequestHead }, paging))).toMatchObject({
      field: 'head',
    });
  });

  it('can only be built from validated values', () => {
    expect(error(parseBranchName('a:b'))).toEqual({
      field: 'branch',
      message: 'contains a character git forbids',
    });
    expect(error(parseOwner('al:ice'))).toMatchObject({ field: 'owner' });
  });
});

describe('name validation', () => {
  it.each(['main', 'feature/x-1', 'release/1.2', 'refs/pull/3/head', 'a.b'])('accepts branch %j', (b) => {
    expect(parseBranchName(b).ok).toBe(true);
  });
  it.each([
    '',
    'a..b',
    'a b',
    '/a',
    'a/',
    'a.',
    'a.lock',
    '.a',
    'a/.b',
    'a@{1}',
    '@',
    'a\\b',
    'a~1',
    'a^',
    'a?',
    'a*',
    'a[',
    '-a',
    'a//b',
    'x\u0001',
  ])('refuses branch %j', (b) => {
    expect(parseBranchName(b).ok).toBe(false);
  });
  it('checks owners and repository names', () => {
    expect(parseOwner('forge-admin').ok).toBe(true);
    expect(parseOwner('a'.repeat(41)).ok).toBe(false);
    expect(parseOwner('-x').ok).toBe(false);
    expect(parseOwner('../x').ok).toBe(false);
    expect(parseRepoName('my.repo_1').ok).toBe(true);
    expect(error(parseRepoName('..'))).toEqual({ field: 'repoName', message: 'must not be "." or ".."' });
    expect(parseRepoName('a/b').ok).toBe(false);
    expect(parseRepoName('x.git').ok).toBe(false);
  });
});

describe('list query', () => {
  it('sends state=open when no state is given, labels as a repeated parameter, paging as page and limit', () => {
    expect(
      value(encodePullRequestQuery({ labels: [labelId(3), labelId(9)], milestone: milestoneId(2) }, paging)),
    ).toEqual([
      ['state', 'open'],
      ['milestone', '2'],
      ['labels', '3'],
      ['labels', '9'],
      ['page', '1'],
      ['limit', '30'],
    ]);
  });

  it('maps every sort to its wire spelling', () => {
    const spell = (sort: PullRequestSort) =>
      value(encodePullRequestQuery({ sort }, paging)).find(([k]) => k === 'sort')?.[1];
    expect(Object.values(PullRequestSort).map(spell)).toEqual([
      'oldest',
      'recentupdate',
      'recentclose',
      'leastupdate',
      'mostcomment',
      'leastcomment',
      'priority',
    ]);
  });

  it('sends base as base_branch and poster as a login; head stays client-side', () => {
    const q = value(
      encodePullRequestQuery(
        { base: br('main'), poster: 'bob', head: sameRepoHead(br('x')), state: 'all' },
        paging,
      ),
    );
    expect(q).toEqual([
      ['state', 'all'],
      ['poster', 'bob'],
      ['base_branch', 'main'],
      ['page', '1'],
      ['limit', '30'],
    ]);
  });

  it('refuses bad paging and ids', () => {
    expect(error(encodePullRequestQuery({}, { page: 0, pageSize: 10 }))).toMatchObject({ field: 'page' });
    expect(error(encodePullRequestQuery({}, { page: 1, pageSize: 0 }))).toMatchObject({ field: 'pageSize' });
    expect(error(encodePullRequestQuery({ labels: [labelId(-1)] }, paging))).toMatchObject({
      field: 'labels',
    });
    expect(error(encodePullRequestQuery({ state: 'merged' as 'open' }, paging))).toMatchObject({
      field: 'state',
    });
  });
});

describe('create and edit bodies send only what is set', () => {
  it('creates with the required keys only', () => {
    expect(
      value(encodeCreatePullRequest({ title: 'T', head: sameRepoHead(br('x')), base: br('main') })),
    ).toEqual({
      title: 'T',
      head: 'x',
      base: br('main'),
    });
  });

  it('creates with every optional key', () => {
    const body = value(
      encodeCreatePullRequest({
        title: 'T',
        head: sameRepoHead(br('x')),
        base: br('main'),
        body: '',
        assignees: ['a'],
        labels: [labelId(1)],
        milestone: milestoneId(4),
        dueDate: new Date('2030-01-02T03:04:05Z'),
      }),
    );
    expect(body).toEqual({
      title: 'T',
      head: 'x',
      base: br('main'),
      body: '',
      assignees: ['a'],
      labels: [1],
      milestone: 4,
      due_date: '2030-01-02T03:04:05.000Z',
    });
  });

  it('sends nothing for an empty edit', () => {
    expect(value(encodeEditPullRequest({}))).toEqual({});
  });

  it('sends empty lists to clear, omits absent lists, and clears the deadline with unset_due_date', () => {
    expect(value(encodeEditPullRequest({ assignees: [], labels: [], unsetDueDate: true }))).toEqual({
      assignees: [],
      labels: [],
      unset_due_date: true,
    });
    expect(value(encodeEditPullRequest({ unsetDueDate: false }))).toEqual({});
    expect(Object.keys(value(encodeEditPullRequest({ unsetDueDate: true })))).toEqual(['unset_due_date']);
  });

  it('refuses contradictory or invalid edits', () => {
    expect(error(encodeEditPullRequest({ dueDate: new Date(), unsetDueDate: true }))).toMatchObject({
      field: 'dueDate',
    });
    expect(error(encodeEditPullRequest({ title: ' ' }))).toEqual({
      field: 'title',
      message: 'must not be blank',
    });
    expect(error(encodeEditPullRequest({ base: 'a..b' as BranchName }))).toMatchObject({ field: 'base' });
    expect(error(encodeEditPullRequest({ dueDate: new Date('nope') }))).toMatchObject({ field: 'dueDate' });
  });
});

describe('merge body', () => {
  it('uses the wire keys Do/MergeTitleField/MergeMessageField and snake_case for the rest', () => {
    expect(
      value(
        encodeMergePullRequest({
          style: MergeStyle.Squash,
          title: 't',
          message: 'm',
          headCommit: 'abcdef0123456789abcdef0123456789abcdef01',
          deleteBranchAfterMerge: true,
          forceMerge: false,
          mergeWhenChecksSucceed: true,
        }),
      ),
    ).toEqual({
      Do: 'squash',
      MergeTitleField: 't',
      MergeMessageField: 'm',
      head_commit_id: 'abcdef0123456789abcdef0123456789abcdef01',
      delete_branch_after_merge: true,
      force_merge: false,
      merge_when_checks_succeed: true,
    });
  });

  it('always sends delete_branch_after_merge (false unless asked), so the repository setting never applies', () => {
    expect(value(encodeMergePullRequest({ style: MergeStyle.Merge }))).toEqual({
      Do: 'merge',
      delete_branch_after_merge: false,
    });
    expect(value(encodeMergePullRequest({ style: MergeStyle.Merge, deleteBranchAfterMerge: true }))).toEqual({
      Do: 'merge',
      delete_branch_after_merge: true,
    });
  });

  it('spells all six styles', () => {
    expect(
      Object.values(MergeStyle).map(
        (style) =>
          value(
            encodeMergePullRequest({
              style,
              ...(style === 'ManuallyMerged' ? { mergedCommit: 'abcdef1' } : {}),
            }),
          ).Do,
      ),
    ).toEqual(['merge', 'rebase', 'rebase-merge', 'squash', 'fast-forward-only', 'manually-merged']);
  });

  it('sends MergeCommitID only for the manually-merged style', () => {
    expect(value(encodeMergePullRequest({ style: 'ManuallyMerged', mergedCommit: 'abcdef1' }))).toEqual({
      Do: 'manually-merged',
      MergeCommitID: 'abcdef1',
      delete_branch_after_merge: false,
    });
    expect(error(encodeMergePullRequest({ style: 'Merge', mergedCommit: 'abcdef1' }))).toMatchObject({
      field: 'mergedCommit',
    });
    expect(error(encodeMergePullRequest({ style: 'ManuallyMerged' }))).toMatchObject({
      field: 'mergedCommit',
    });
    expect(error(encodeMergePullRequest({ style: 'Merge', headCommit: 'zz' }))).toMatchObject({
      field: 'headCommit',
    });
    // Gitea compares the head commit whole: a short id could only ever answer 409.
    expect(error(encodeMergePullRequest({ style: 'Merge', headCommit: 'abc1234' }))).toMatchObject({
      field: 'headCommit',
    });
    expect(encodeMergePullRequest({ style: 'Merge', headCommit: 'a'.repeat(64) }).ok).toBe(true);
  });
});

describe('review bodies', () => {
  it('creates a draft with remarks on new and old lines and on a whole file', () => {
    expect(
      value(
        encodeCreateReview({
          comments: [
            { path: 'a', body: ' new ', newPosition: 3 },
            { path: 'a', body: 'old', oldPosition: 2 },
            { path: 'b', body: 'whole file' },
            { path: 'a', body: 'span', newPosition: 5, extraLinesCount: 2 },
          ],
        }),
      ),
    ).toEqual({
      comments: [
        { path: 'a', body: 'new', new_position: 3 },
        { path: 'a', body: 'old', old_position: 2 },
        { path: 'b', body: 'whole file' },
        { path: 'a', body: 'span', new_position: 5, extra_lines_count: 2 },
      ],
    });
  });

  it('spells review events in upper case with underscores', () => {
    expect(value(encodeCreateReview({ event: ReviewState.RequestChanges, body: 'x' }))).toEqual({
      event: 'REQUEST_CHANGES',
      body: 'x',
    });
    expect(value(encodeSubmitReview({ event: ReviewState.Approved }))).toEqual({ event: 'APPROVED' });
  });

  it('refuses a blank remark, a span without a position, and RequestReview as an event', () => {
    expect(
      error(
        encodeCreateReview({
          comments: [
            { path: 'a', body: 'ok' },
            { path: 'a', body: '  ' },
          ],
        }),
      ),
    ).toEqual({
      field: 'comments',
      message: 'comment 1: its body must not be blank',
    });
    expect(error(validateNewReviewComment({ path: 'a', body: 'x', extraLinesCount: 1 }))).toEqual({
      field: 'extraLinesCount',
      message: 'needs a position',
    });
    expect(error(encodeCreateReview({ event: ReviewState.RequestReview }))).toMatchObject({ field: 'event' });
  });

  it('refuses a remark on both a new-side and an old-side line', () => {
    expect(error(validateNewReviewComment({ path: 'a', body: 'x', newPosition: 1, oldPosition: 2 }))).toEqual(
      {
        field: 'oldPosition',
        message: 'cannot be set together with a new position',
      },
    );
    expect(
      error(encodeCreateReview({ comments: [{ path: 'a', body: 'x', newPosition: 1, oldPosition: 2 }] })),
    ).toEqual({
      field: 'comments',
      message: 'comment 0: its old position cannot be set together with a new position',
    });
  });

  it('dismisses with only what is set', () => {
    expect(value(encodeDismissReview({}))).toEqual({});
    expect(value(encodeDismissReview({ message: 'm', priors: true }))).toEqual({
      message: 'm',
      priors: true,
    });
  });

  it('omits empty reviewer and team lists and refuses both empty', () => {
    expect(value(encodeReviewRequest({ reviewers: ['a'], teams: [] }))).toEqual({ reviewers: ['a'] });
    expect(value(encodeReviewRequest({ teams: ['core'] }))).toEqual({ team_reviewers: ['core'] });
    expect(error(encodeReviewRequest({}))).toEqual({
      field: 'reviewers',
      message: 'name at least one reviewer or team',
    });
  });
});

describe('diff request', () => {
  it('selects the path suffix and sends binary=true only when asked', () => {
    expect(value(encodeDiffRequest({ format: 'Diff' }))).toEqual({ suffix: 'diff', query: [] });
    expect(value(encodeDiffRequest({ format: 'Patch', includeBinary: true }))).toEqual({
      suffix: 'patch',
      query: [['binary', 'true']],
    });
  });
});
