/**
 * Request types and their encoders. Bodies send only what is set: an unset optional field
 * contributes no JSON key, so the server applies its own default. Every encoder validates first.
 */

import {
  DIFF_FORMAT_WIRE,
  type DiffFormat,
  MERGE_STYLE_WIRE,
  type MergeStyle,
  PULL_REQUEST_SORT_WIRE,
  type PullRequestSort,
  REVIEW_STATE_WIRE,
  type ReviewState,
  type StateFilter,
} from './enums.js';
import type { Branded, LabelId, MilestoneId } from './ids.js';
import {
  type BranchName,
  checkPositiveId,
  checkRequiredText,
  firstError,
  type Owner,
  parseBranchName,
  parseLogin,
  type Validated,
  type ValidationError,
  valid,
} from './validation.js';

/**
 * The head of a pull request: a bare branch name (same repository) or `owner:branch` (a fork).
 * Built only by {@link sameRepoHead} or {@link forkHead} from validated values; never parsed.
 */
export type PullRequestHead = Branded<string, 'PullRequestHead'>;

/** The head for a branch of the base repository. */
export function sameRepoHead(branch: BranchName): PullRequestHead {
  return branch as string as PullRequestHead;
}

/** The head for a branch of a fork owned by `owner`. */
export function forkHead(owner: Owner, branch: BranchName): PullRequestHead {
  return `${owner}:${branch}` as PullRequestHead;
}

export interface PullRequestQuery {
  /**
   * Omitted: open only. The library then sends `state=open` explicitly, because Gitea 1.26 applies
   * no state filter at all when the parameter is absent (its documented default is not applied).
   */
  readonly state?: StateFilter;
  readonly sort?: PullRequestSort;
  readonly milestone?: MilestoneId;
  /**
   * Sent as a repeated `labels` parameter. Gitea 1.26 matches pull requests carrying ANY of the
   * labels and returns one row per matching label; `listAll` removes the duplicates.
   */
  readonly labels?: readonly LabelId[];
  /** Login of the author. */
  readonly poster?: string;
  /** Base branch name (wire `base_branch`). */
  readonly base?: string;
  /** Filtered by the client: Gitea 1.26's list endpoint has no head filter. */
  readonly head?: PullRequestHead;
}

export interface Paging {
  /** 1-based. */
  readonly page?: number;
  /** Sent as `limit`; the server may silently cap it (Gitea: MAX_RESPONSE_ITEMS, 50 by default). */
  readonly pageSize?: number;
}

export interface CreatePullRequest {
  readonly title: string;
  readonly head: PullRequestHead;
  readonly base: string;
  readonly body?: string;
  readonly assignees?: readonly string[];
  /** Label ids, not names. */
  readonly labels?: readonly LabelId[];
  readonly milestone?: MilestoneId;
  readonly dueDate?: Date;
}

export interface EditPullRequest {
  readonly title?: string;
  readonly body?: string;
  /** Replaces the assignees; `[]` clears; absent leaves alone. */
  readonly assignees?: readonly string[];
  /** Replaces the labels; `[]` clears; absent leaves alone. */
  readonly labels?: readonly LabelId[];
  readonly milestone?: MilestoneId;
  readonly state?: 'open' | 'closed';
  /** Retargets the pull request. */
  readonly base?: string;
  readonly dueDate?: Date;
  /** Clears the deadline (`unset_due_date: true`); a null due date is never sent. */
  readonly unsetDueDate?: boolean;
  readonly allowMaintainerEdit?: boolean;
}

export interface MergePullRequest {
  readonly style: MergeStyle;
  readonly title?: string;
  readonly message?: string;
  /** Expected head sha; a mismatch refuses the merge, which makes a repeat after a timeout safe. */
  readonly headCommit?: string;
  /** The commit that merged it (ManuallyMerged only). */
  readonly mergedCommit?: string;
  readonly deleteBranchAfterMerge?: boolean;
  readonly forceMerge?: boolean;
  readonly mergeWhenChecksSucceed?: boolean;
}

/** An inline remark: on a new-side line, an old-side line, or the file as a whole (neither). */
export interface NewReviewComment {
  /** Trimmed; must not be blank. */
  readonly body: string;
  readonly path: string;
  readonly newPosition?: number;
  readonly oldPosition?: number;
  /** Extra lines of a span; 0 or absent is a single line. Not part of Gitea 1.26's API (ignored there). */
  readonly extraLinesCount?: number;
}

export interface CreateReview {
  readonly body?: string;
  /** Absent or Pending: the reviewer's draft. */
  readonly event?: ReviewState;
  readonly commit?: string;
  readonly comments?: readonly NewReviewComment[];
}

export interface SubmitReview {
  readonly event: ReviewState;
  readonly body?: string;
}

export interface DismissReview {
  readonly message?: string;
  /** Also dismiss the reviewer's earlier reviews. Default false. */
  readonly priors?: boolean;
}

export interface ReviewRequest {
  readonly reviewers?: readonly string[];
  readonly teams?: readonly string[];
}

export interface DiffRequest {
  readonly format: DiffFormat;
  /** Embed binary changes (wire `binary=true`); can be far larger. Default false. */
  readonly includeBinary?: boolean;
}

type Json = Record<string, unknown>;
type Query = [string, string][];

const SHA = /^[0-9a-f]{7,64}$/;

function put(target: Json, key: string, value: unknown): void {
  if (value !== undefined) target[key] = value;
}

function checkLogins(fieldName: string, logins: readonly string[] | undefined): ValidationError | undefined {
  for (const login of logins ?? []) {
    const r = parseLogin(login, fieldName);
    if (!r.ok) return r.error;
  }
  return undefined;
}

function checkIds(fieldName: string, ids: readonly number[] | undefined): ValidationError | undefined {
  for (const n of ids ?? []) {
    const e = checkPositiveId(fieldName, n);
    if (e) return e;
  }
  return undefined;
}

function checkBranch(fieldName: string, name: string | undefined): ValidationError | undefined {
  if (name === undefined) return undefined;
  const r = parseBranchName(name, fieldName);
  return r.ok ? undefined : r.error;
}

function checkDate(fieldName: string, d: Date | undefined): ValidationError | undefined {
  if (d === undefined) return undefined;
  return d instanceof Date && !Number.isNaN(d.getTime())
    ? undefined
    : { field: fieldName, message: 'must be a valid date' };
}

function checkSha(fieldName: string, sha: string | undefined): ValidationError | undefined {
  if (sha === undefined) return undefined;
  return SHA.test(sha) ? undefined : { field: fieldName, message: 'must be a hex commit id' };
}

function result<T>(error: ValidationError | undefined, value: () => T): Validated<T> {
  return error ? { ok: false, error } : valid(value());
}

/** Query of the list endpoint plus paging. */
export function encodePullRequestQuery(q: PullRequestQuery, paging: Required<Paging>): Validated<Query> {
  const error = firstError(
    q.state !== undefined && !['open', 'closed', 'all'].includes(q.state)
      ? { field: 'state', message: 'must be open, closed or all' }
      : undefined,
    q.sort !== undefined && !(q.sort in PULL_REQUEST_SORT_WIRE)
      ? { field: 'sort', message: 'unknown sort' }
      : undefined,
    q.milestone !== undefined ? checkPositiveId('milestone', q.milestone) : undefined,
    checkIds('labels', q.labels),
    q.poster !== undefined ? checkLogins('poster', [q.poster]) : undefined,
    checkBranch('base', q.base),
    checkPaging(paging),
  );
  return result(error, () => {
    const out: Query = [];
    out.push(['state', q.state ?? 'open']);
    if (q.sort !== undefined) out.push(['sort', PULL_REQUEST_SORT_WIRE[q.sort]]);
    if (q.milestone !== undefined) out.push(['milestone', String(q.milestone)]);
    for (const l of q.labels ?? []) out.push(['labels', String(l)]);
    if (q.poster !== undefined) out.push(['poster', q.poster]);
    if (q.base !== undefined) out.push(['base_branch', q.base]);
    out.push(['page', String(paging.page)], ['limit', String(paging.pageSize)]);
    return out;
  });
}

export function checkPaging(p: Required<Paging>): ValidationError | undefined {
  if (!Number.isSafeInteger(p.page) || p.page < 1)
    return { field: 'page', message: 'must be an integer of at least 1' };
  if (!Number.isSafeInteger(p.pageSize) || p.pageSize < 1)
    return { field: 'pageSize', message: 'must be a positive integer' };
  return undefined;
}

export function pagingQuery(p: Required<Paging>): Query {
  return [
    ['page', String(p.page)],
    ['limit', String(p.pageSize)],
  ];
}

export function encodeCreatePullRequest(c: CreatePullRequest): Validated<Json> {
  const error = firstError(
    checkRequiredText('title', c.title, 255),
    typeof c.head === 'string' && c.head.length > 0
      ? undefined
      : { field: 'head', message: 'must not be empty' },
    c.base === undefined ? { field: 'base', message: 'must not be empty' } : checkBranch('base', c.base),
    checkLogins('assignees', c.assignees),
    checkIds('labels', c.labels),
    c.milestone !== undefined ? checkPositiveId('milestone', c.milestone) : undefined,
    checkDate('dueDate', c.dueDate),
  );
  return result(error, () => {
    const b: Json = { title: c.title, head: c.head, base: c.base };
    put(b, 'body', c.body);
    put(b, 'assignees', c.assignees ? [...c.assignees] : undefined);
    put(b, 'labels', c.labels ? [...c.labels] : undefined);
    put(b, 'milestone', c.milestone);
    put(b, 'due_date', c.dueDate?.toISOString());
    return b;
  });
}

export function encodeEditPullRequest(e: EditPullRequest): Validated<Json> {
  const error = firstError(
    e.title !== undefined ? checkRequiredText('title', e.title, 255) : undefined,
    checkLogins('assignees', e.assignees),
    checkIds('labels', e.labels),
    e.milestone !== undefined ? checkPositiveId('milestone', e.milestone) : undefined,
    e.state !== undefined && e.state !== 'open' && e.state !== 'closed'
      ? { field: 'state', message: 'must be open or closed' }
      : undefined,
    checkBranch('base', e.base),
    checkDate('dueDate', e.dueDate),
    e.dueDate !== undefined && e.unsetDueDate === true
      ? { field: 'dueDate', message: 'cannot set and unset the due date together' }
      : undefined,
  );
  return result(error, () => {
    const b: Json = {};
    put(b, 'title', e.title);
    put(b, 'body', e.body);
    put(b, 'assignees', e.assignees ? [...e.assignees] : undefined);
    put(b, 'labels', e.labels ? [...e.labels] : undefined);
    put(b, 'milestone', e.milestone);
    put(b, 'state', e.state);
    put(b, 'base', e.base);
    put(b, 'due_date', e.dueDate?.toISOString());
    put(b, 'unset_due_date', e.unsetDueDate === true ? true : undefined);
    put(b, 'allow_maintainer_edit', e.allowMaintainerEdit);
    return b;
  });
}

/**
 * Merge body. `Do`, `MergeTitleField`, `MergeMessageField`, `MergeCommitID` use the PascalCase
 * names every released Gitea binds (newer ones accept both); the rest are snake_case.
 */
export function encodeMergePullRequest(m: MergePullRequest): Validated<Json> {
  const error = firstError(
    m.style in MERGE_STYLE_WIRE ? undefined : { field: 'style', message: 'unknown merge style' },
    checkSha('headCommit', m.headCommit),
    checkSha('mergedCommit', m.mergedCommit),
    m.mergedCommit !== undefined && m.style !== 'ManuallyMerged'
      ? { field: 'mergedCommit', message: 'only applies to the manually-merged style' }
      : undefined,
    m.style === 'ManuallyMerged' && m.mergedCommit === undefined
      ? { field: 'mergedCommit', message: 'is required for the manually-merged style' }
      : undefined,
  );
  return result(error, () => {
    const b: Json = { Do: MERGE_STYLE_WIRE[m.style] };
    put(b, 'MergeTitleField', m.title);
    put(b, 'MergeMessageField', m.message);
    put(b, 'MergeCommitID', m.mergedCommit);
    put(b, 'head_commit_id', m.headCommit);
    put(b, 'delete_branch_after_merge', m.deleteBranchAfterMerge);
    put(b, 'force_merge', m.forceMerge);
    put(b, 'merge_when_checks_succeed', m.mergeWhenChecksSucceed);
    return b;
  });
}

function checkNewComment(c: NewReviewComment, i: number): ValidationError | undefined {
  const at = (f: string) => `comments[${i}].${f}`;
  return firstError(
    checkRequiredText(at('body'), c.body),
    checkRequiredText(at('path'), c.path),
    c.newPosition !== undefined ? checkPositiveId(at('newPosition'), c.newPosition) : undefined,
    c.oldPosition !== undefined ? checkPositiveId(at('oldPosition'), c.oldPosition) : undefined,
    c.extraLinesCount !== undefined && (!Number.isSafeInteger(c.extraLinesCount) || c.extraLinesCount < 0)
      ? { field: at('extraLinesCount'), message: 'must be a non-negative integer' }
      : undefined,
    c.extraLinesCount && c.newPosition === undefined && c.oldPosition === undefined
      ? { field: at('extraLinesCount'), message: 'needs a position' }
      : undefined,
  );
}

export function encodeNewReviewComment(c: NewReviewComment): Json {
  const b: Json = { body: c.body.trim(), path: c.path };
  put(b, 'new_position', c.newPosition);
  put(b, 'old_position', c.oldPosition);
  put(b, 'extra_lines_count', c.extraLinesCount ? c.extraLinesCount : undefined);
  return b;
}

export function validateNewReviewComment(c: NewReviewComment): Validated<Json> {
  const error = checkNewComment(c, 0);
  return result(error ? { ...error, field: error.field.replace(/^comments\[0\]\./, '') } : undefined, () =>
    encodeNewReviewComment(c),
  );
}

export function encodeCreateReview(r: CreateReview): Validated<Json> {
  const error = firstError(
    r.event !== undefined && !(r.event in REVIEW_STATE_WIRE)
      ? { field: 'event', message: 'unknown review state' }
      : undefined,
    // Gitea 1.26 would file a RequestReview event as a pending draft; asking for a review is requestReviewers.
    r.event === 'RequestReview'
      ? { field: 'event', message: 'request-review is not a review event' }
      : undefined,
    checkSha('commit', r.commit),
    ...(r.comments ?? []).map(checkNewComment),
  );
  return result(error, () => {
    const b: Json = {};
    put(b, 'event', r.event !== undefined ? REVIEW_STATE_WIRE[r.event] : undefined);
    put(b, 'body', r.body);
    put(b, 'commit_id', r.commit);
    put(b, 'comments', r.comments ? r.comments.map(encodeNewReviewComment) : undefined);
    return b;
  });
}

export function encodeSubmitReview(s: SubmitReview): Validated<Json> {
  const error =
    s.event in REVIEW_STATE_WIRE ? undefined : { field: 'event', message: 'unknown review state' };
  return result(error, () => {
    const b: Json = { event: REVIEW_STATE_WIRE[s.event] };
    put(b, 'body', s.body);
    return b;
  });
}

export function encodeDismissReview(d: DismissReview): Validated<Json> {
  const b: Json = {};
  put(b, 'message', d.message);
  put(b, 'priors', d.priors);
  return valid(b);
}

/** Empty lists contribute no key; both empty is refused before sending (the server answers 422). */
export function encodeReviewRequest(r: ReviewRequest): Validated<Json> {
  const reviewers = r.reviewers ?? [];
  const teams = r.teams ?? [];
  const error = firstError(
    reviewers.length === 0 && teams.length === 0
      ? { field: 'reviewers', message: 'name at least one reviewer or team' }
      : undefined,
    checkLogins('reviewers', reviewers),
    ...teams.map((t) => checkRequiredText('teams', t)),
  );
  return result(error, () => {
    const b: Json = {};
    if (reviewers.length > 0) b.reviewers = [...reviewers];
    if (teams.length > 0) b.team_reviewers = [...teams];
    return b;
  });
}

export function encodeDiffRequest(d: DiffRequest): Validated<{ suffix: string; query: Query }> {
  const error =
    d.format in DIFF_FORMAT_WIRE ? undefined : { field: 'format', message: 'must be Diff or Patch' };
  return result(error, () => ({
    suffix: DIFF_FORMAT_WIRE[d.format],
    query: d.includeBinary ? [['binary', 'true']] : [],
  }));
}
