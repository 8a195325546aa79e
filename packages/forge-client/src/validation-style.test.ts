/**
 * Every validator's refusals follow the ValidationError style of the spec: `field` is a
 * lower-camel-case concept name, `message` is short, lowercase, without a trailing period. Inputs
 * are untyped on purpose (what a JavaScript caller or a cast can pass), including inherited
 * property names such as `toString` that an `in` check would take for enum cases.
 */
import { describe, expect, it } from 'vitest';
import { ForgeClient } from './client.js';
import {
  type Auth,
  basicAuth,
  ForgeConfig,
  type ForgeConfigInput,
  normaliseBaseUri,
  tokenAuth,
} from './config.js';
import { pullRequestNumber, type ReviewCommentId, type ReviewId } from './ids.js';
import {
  encodeCreatePullRequest,
  encodeCreateReview,
  encodeDiffRequest,
  encodeEditPullRequest,
  encodeMergePullRequest,
  encodePullRequestQuery,
  encodeReviewRequest,
  encodeSubmitReview,
  forkHead,
  type NewReviewComment,
  type PullRequestHead,
  sameRepoHead,
  validateNewReviewComment,
} from './requests.js';
import type { ForgeResult } from './result.js';
import {
  type BranchName,
  checkPositiveId,
  checkRequiredText,
  type Owner,
  parseBranchName,
  parseLogin,
  parseOwner,
  parseRepoName,
  type ValidationError,
} from './validation.js';

// biome-ignore lint/suspicious/noExplicitAny: untyped input is the point of these cases
const any = (v: unknown): any => v;
const paging = { page: 1, pageSize: 10 };
const main = parseBranchName('main') as { value: BranchName };
const head = sameRepoHead(main.value);
const pr = { title: 'T', head, base: main.value };
const repo = { owner: 'acme', repo: 'web' };
const n = pullRequestNumber(1);

const errOf = (r: { ok: boolean; error?: ValidationError }) => (r.ok ? undefined : r.error);
const cfg = (input: Partial<ForgeConfigInput>) =>
  errOf(ForgeConfig.create({ userAgent: 'ua', baseUri: 'http://127.0.0.1:9/api/v1', ...input }));
const auth = (a: unknown) => cfg({ auth: a as Auth });
const comment = (c: Partial<NewReviewComment>) => ({ path: 'a', body: 'x', ...c }) as NewReviewComment;

const client = ForgeClient.create({ userAgent: 'ua', baseUri: 'http://127.0.0.1:9/api/v1' });
const refusal = async (r: Promise<ForgeResult<unknown>>) => {
  const out = await r;
  return !out.ok && out.failure.kind === 'validation' ? out.failure.error : undefined;
};

/** name -> a call that must be refused. */
const cases: Record<string, () => ValidationError | undefined | Promise<ValidationError | undefined>> = {
  'owner empty': () => errOf(parseOwner('')),
  'owner too long': () => errOf(parseOwner('a'.repeat(41))),
  'owner punctuation': () => errOf(parseOwner('-x')),
  'login not a string': () => errOf(parseLogin(any(7))),
  'repo name empty': () => errOf(parseRepoName('')),
  'repo name too long': () => errOf(parseRepoName('a'.repeat(101))),
  'repo name dots': () => errOf(parseRepoName('..')),
  'repo name slash': () => errOf(parseRepoName('a/b')),
  'repo name .git': () => errOf(parseRepoName('x.git')),
  'branch empty': () => errOf(parseBranchName('')),
  'branch too long': () => errOf(parseBranchName('a'.repeat(256))),
  'branch character': () => errOf(parseBranchName('a b')),
  'branch sequence': () => errOf(parseBranchName('a..b')),
  'branch shape': () => errOf(parseBranchName('-a')),
  'branch component': () => errOf(parseBranchName('a/.b')),
  'positive id': () => checkPositiveId('number', 0),
  'blank text': () => checkRequiredText('title', ' '),
  'long text': () => checkRequiredText('title', 'x'.repeat(300), 255),
  'base uri empty': () => errOf(normaliseBaseUri('')),
  'base uri relative': () => errOf(normaliseBaseUri('nope')),
  'base uri scheme': () => errOf(normaliseBaseUri('ftp://h/api/v1')),
  'base uri credentials': () => errOf(normaliseBaseUri('http://u:p@h/api/v1')),
  'base uri query': () => errOf(normaliseBaseUri('http://h/api/v1?x=1')),
  'base uri path': () => errOf(normaliseBaseUri('http://h/')),
  'user agent empty': () => cfg({ userAgent: '' }),
  'user agent control': () => cfg({ userAgent: 'a\nb' }),
  'user agent non-ascii': () => cfg({ userAgent: 'é' }),
  'token empty': () => auth(tokenAuth('')),
  'token non-ascii': () => auth(tokenAuth('é')),
  'username empty': () => auth(basicAuth('', 'pw')),
  'username colon': () => auth(basicAuth('a:b', 'pw')),
  'password empty': () => auth(basicAuth('bob', '')),
  'otp shape': () => auth(basicAuth('bob', 'pw', { otp: 'x' })),
  'sudo login': () => auth(tokenAuth('t', { sudo: 'bad name!' })),
  'auth kind': () => auth({ kind: 'toString' }),
  'retry attempts': () => cfg({ retry: { maxAttempts: 0 } }),
  'retry delay': () => cfg({ retry: { initialDelayMs: -1 } }),
  'retry statuses': () => cfg({ retry: { retryOnStatus: any(['x']) } }),
  'page size': () => cfg({ defaultPageSize: 0 }),
  'connect timeout': () => cfg({ connectTimeoutMs: Number.NaN }),
  'read timeout': () => cfg({ readTimeoutMs: Number.POSITIVE_INFINITY }),
  'response bound': () => cfg({ maxResponseBodyBytes: 0 }),
  'download bound': () => cfg({ maxDownloadBodyBytes: 1.5 }),
  'query state': () => errOf(encodePullRequestQuery({ state: any('merged') }, paging)),
  'query sort inherited': () => errOf(encodePullRequestQuery({ sort: any('toString') }, paging)),
  'query sort constructor': () => errOf(encodePullRequestQuery({ sort: any('constructor') }, paging)),
  'query milestone': () => errOf(encodePullRequestQuery({ milestone: any(0) }, paging)),
  'query labels': () => errOf(encodePullRequestQuery({ labels: any([-1]) }, paging)),
  'query poster': () => errOf(encodePullRequestQuery({ poster: 'bad name' }, paging)),
  'query base': () => errOf(encodePullRequestQuery({ base: any('a..b') }, paging)),
  'query head': () => errOf(encodePullRequestQuery({ head: any('x') }, paging)),
  'query page': () => errOf(encodePullRequestQuery({}, { page: 0, pageSize: 1 })),
  'query page size': () => errOf(encodePullRequestQuery({}, { page: 1, pageSize: 0 })),
  'create title': () => errOf(encodeCreatePullRequest({ ...pr, title: '' })),
  'create head string': () => errOf(encodeCreatePullRequest({ ...pr, head: any('x') })),
  'create head parts': () =>
    errOf(encodeCreatePullRequest({ ...pr, head: forkHead(any('a b'), main.value) })),
  'create base missing': () => errOf(encodeCreatePullRequest({ ...pr, base: any(undefined) })),
  'create base bad': () => errOf(encodeCreatePullRequest({ ...pr, base: any('a b') })),
  'create assignees': () => errOf(encodeCreatePullRequest({ ...pr, assignees: ['bad name'] })),
  'create labels': () => errOf(encodeCreatePullRequest({ ...pr, labels: any([0]) })),
  'create milestone': () => errOf(encodeCreatePullRequest({ ...pr, milestone: any(-2) })),
  'create due date': () => errOf(encodeCreatePullRequest({ ...pr, dueDate: new Date('x') })),
  'edit title': () => errOf(encodeEditPullRequest({ title: ' ' })),
  'edit state': () => errOf(encodeEditPullRequest({ state: any('merged') })),
  'edit due date twice': () => errOf(encodeEditPullRequest({ dueDate: new Date(), unsetDueDate: true })),
  'merge style inherited': () => errOf(encodeMergePullRequest({ style: any('toString') })),
  'merge style constructor': () => errOf(encodeMergePullRequest({ style: any('constructor') })),
  'merge head commit': () => errOf(encodeMergePullRequest({ style: 'Merge', headCommit: 'zz' })),
  'merge merged commit misplaced': () =>
    errOf(encodeMergePullRequest({ style: 'Merge', mergedCommit: 'abcdef1' })),
  'merge merged commit missing': () => errOf(encodeMergePullRequest({ style: 'ManuallyMerged' })),
  'review event inherited': () => errOf(encodeCreateReview({ event: any('constructor') })),
  'review event request': () => errOf(encodeCreateReview({ event: 'RequestReview' })),
  'review commit': () => errOf(encodeCreateReview({ commit: 'zz' })),
  'review comments not a list': () => errOf(encodeCreateReview({ comments: any('x') })),
  'review comment not an object': () => errOf(encodeCreateReview({ comments: any([null]) })),
  'review comment body': () => errOf(encodeCreateReview({ comments: [comment({ body: ' ' })] })),
  'review comment path': () => errOf(encodeCreateReview({ comments: [comment({ path: '' })] })),
  'review comment new position': () => errOf(encodeCreateReview({ comments: [comment({ newPosition: 0 })] })),
  'review comment old position': () =>
    errOf(encodeCreateReview({ comments: [comment({ oldPosition: -1 })] })),
  'review comment both positions': () =>
    errOf(encodeCreateReview({ comments: [comment({ newPosition: 1, oldPosition: 1 })] })),
  'review comment extra lines': () =>
    errOf(encodeCreateReview({ comments: [comment({ newPosition: 1, extraLinesCount: -1 })] })),
  'review comment span': () => errOf(encodeCreateReview({ comments: [comment({ extraLinesCount: 2 })] })),
  'comment not an object': () => errOf(validateNewReviewComment(any(undefined))),
  'comment body': () => errOf(validateNewReviewComment(comment({ body: '' }))),
  'comment both positions': () =>
    errOf(validateNewReviewComment(comment({ newPosition: 1, oldPosition: 2 }))),
  'comment span': () => errOf(validateNewReviewComment(comment({ extraLinesCount: 1 }))),
  'submit event inherited': () => errOf(encodeSubmitReview({ event: any('hasOwnProperty') })),
  'review request empty': () => errOf(encodeReviewRequest({})),
  'review request reviewer': () => errOf(encodeReviewRequest({ reviewers: ['bad name'] })),
  'review request team': () => errOf(encodeReviewRequest({ teams: [' '] })),
  'diff format inherited': () => errOf(encodeDiffRequest({ format: any('valueOf') })),
  'update style inherited': () => refusal(client.pulls.update(repo, n, any('toString'))),
  'update style constructor': () => refusal(client.pulls.update(repo, n, any('constructor'))),
  'pull request number': () => refusal(client.pulls.get(repo, any(1.5))),
  'review id': () => refusal(client.reviews.get(repo, n, any(0) as ReviewId)),
  'comment id': () => refusal(client.reviews.getComment(repo, n, any(1), any(-1) as ReviewCommentId)),
  'repository owner': () => refusal(client.pulls.get({ owner: '', repo: 'web' }, n)),
  'raw path relative': () => refusal(client.request({ method: 'GET', path: 'repos/x' })),
  'raw path escape': () => refusal(client.request({ method: 'GET', path: '/%2e%2e/%2e%2e/admin' })),
  'raw body': () => refusal(client.request({ method: 'POST', path: '/x', body: { n: 1n } })),
  'create body': () => refusal(client.pulls.create(repo, { ...pr, body: any(1n) })),
};

describe('ValidationError style, over every validator', () => {
  it.each(Object.entries(cases))('%s', async (_name, run) => {
    const e = await run();
    expect(e, 'expected a refusal').toBeDefined();
    expect(e?.field).toMatch(/^[a-z][a-zA-Z0-9]*$/);
    expect(e?.message).toMatch(/^[a-z][^A-Z]*[^.]$/);
  });

  it('uses field names that are concepts, not paths', () => {
    expect(errOf(encodeCreateReview({ comments: [comment({}), comment({ path: '' })] }))).toEqual({
      field: 'comments',
      message: 'comment 1: its path must not be blank',
    });
  });
});

describe('typed heads stay valid', () => {
  it('builds heads that pass the same checks', () => {
    const alice = parseOwner('alice') as { value: Owner };
    for (const h of [head, forkHead(alice.value, main.value)] as PullRequestHead[]) {
      expect(encodeCreatePullRequest({ ...pr, head: h }).ok).toBe(true);
    }
  });
});
