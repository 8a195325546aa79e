/**
 * Request types and their encoders. Bodies send only what is set: an unset optional field
 * contributes no JSON key, so the server applies its own default. Every encoder validates first.
 */

import { inspect } from 'node:util';
import {
  DIFF_FORMAT_WIRE,
  type DiffFormat,
  isCase,
  MERGE_STYLE_WIRE,
  type MergeStyle,
  PULL_REQUEST_SORT_WIRE,
  type PullRequestSort,
  REVIEW_STATE_WIRE,
  type ReviewState,
  type StateFilter,
} from './enums.js';
import type { LabelId, MilestoneId } from './ids.js';
import {
  type BranchName,
  checkPositiveId,
  checkRequiredText,
  firstError,
  type Owner,
  parseBranchName,
  parseLogin,
  parseOwner,
  type Validated,
  type ValidationError,
  valid,
} from './validation.js';

/** The validated parts a {@link PullRequestHead} is made of. */
interface HeadParts {
  readonly owner?: Owner;
  readonly branch: BranchName;
}

const HEAD_PARTS = new WeakMap<object, HeadParts>();

/**
 * The head of a pull request: a branch of the base repository, or a branch of a fork. Built only by
 * {@link sameRepoHead} or {@link forkHead} from validated values, and opaque: it keeps those parts,
 * and its text form (`toString`, JSON) is the wire string — a bare branch name or `owner:branch` —
 * which the library never parses back.
 */
export class PullRequestHead {
  declare private readonly brand: 'PullRequestHead';
  private constructor() {}

  /** The wire string: `branch`, or `owner:branch` for a fork. */
  toString(): string {
    const p = HEAD_PARTS.get(this);
    if (p === undefined) return '';
    return p.owner === undefined ? p.branch : `${p.owner}:${p.branch}`;
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return `PullRequestHead(${this.toString()})`;
  }
}

function makeHead(parts: HeadParts): PullRequestHead {
  const head = Object.create(PullRequestHead.prototype) as PullRequestHead;
  HEAD_PARTS.set(head, Object.freeze({ ...parts }));
  return Object.freeze(head) as PullRequestHead;
}

/** The validated parts of a head; undefined for anything {@link sameRepoHead}/{@link forkHead} did not build. */
export function headParts(head: unknown): HeadParts | undefined {
  return typeof head === 'object' && head !== null ? HEAD_PARTS.get(head) : undefined;
}

/** The head for a branch of the base repository. */
export function sameRepoHead(branch: BranchName): PullRequestHead {
  return makeHead({ branch });
}

/** The head for a branch of a fork owned by `owner`. */
export function forkHead(owner: Owner, branch: BranchName): PullRequestHead {
  return makeHead({ owner, branch });
}

/** Re-checks a head's parts (an untyped caller may have passed anything); the wire string when valid. */
function checkHead(head: unknown): Validated<string> {
  const parts = headParts(head);
  if (parts === undefined)
    return { ok: false, error: { field: 'head', message: 'must be built from a validated branch name' } };
  const branch = parseBranchName(parts.branch, 'head');
  if (!branch.ok) return branch;
  if (parts.owner !== undefined) {
    const owner = parseOwner(parts.owner, 'head');
    if (!owner.ok) return owner;
  }
  return valid(String(head));
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
  readonly base?: BranchName;
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
  readonly base: BranchName;
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
  readonly base?: BranchName;
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
  /**
   * Delete the head branch once merged. Default false, and always sent: when the key is absent,
   * Gitea applies the repository's "delete branch after merge" setting instead.
   */
  readonly deleteBranchAfterMerge?: boolean;
  readonly forceMerge?: boolean;
  readonly mergeWhenChecksSucceed?: boolean;
}

/** An inline remark: on a new-side line, an old-side line, or the file as a whole (neither; never both). */
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

/** A commit id, abbreviated or whole (SHA-1 or SHA-256), for fields Gitea resolves through git. */
const SHA = /^[0-9a-f]{7,64}$/;
/** A whole commit id: Gitea compares `head_commit_id` as a string, so an abbreviated one never matches. */
const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

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

function checkSha(fieldName: string, sha: string | undefined, whole = SHA): ValidationError | undefined {
  if (sha === undefined) return undefined;
  if (whole.test(sha)) return undefined;
  const message =
    whole === FULL_SHA ? 'must be a whole hex commit id (40 or 64 characters)' : 'must be a hex commit id';
  return { field: fieldName, message };
}

function errorOf(v: Validated<unknown>): ValidationError | undefined {
  return v.ok ? undefined : v.error;
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
    q.sort !== undefined && !isCase(PULL_REQUEST_SORT_WIRE, q.sort)
      ? { field: 'sort', message: 'unknown sort' }
      : undefined,
    q.milestone !== undefined ? checkPositiveId('milestone', q.milestone) : undefined,
    checkIds('labels', q.labels),
    q.poster !== undefined ? checkLogins('poster', [q.poster]) : undefined,
    checkBranch('base', q.base),
    q.head !== undefined ? errorOf(checkHead(q.head)) : undefined,
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
  const head = checkHead(c.head);
  const error = firstError(
    checkRequiredText('title', c.title, 255),
    errorOf(head),
    c.base === undefined ? { field: 'base', message: 'must not be empty' } : checkBranch('base', c.base),
    checkLogins('assignees', c.assignees),
    checkIds('labels', c.labels),
    c.milestone !== undefined ? checkPositiveId('milestone', c.milestone) : undefined,
    checkDate('dueDate', c.dueDate),
  );
  return result(error, () => {
    const b: Json = { title: c.title, head: head.ok ? head.value : '', base: c.base };
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
    isCase(MERGE_STYLE_WIRE, m.style) ? undefined : { field: 'style', message: 'unknown merge style' },
    checkSha('headCommit', m.headCommit, FULL_SHA),
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
    // Always sent (spec default false): without the key Gitea uses the repository's setting and
    // may delete the head branch.
    b.delete_branch_after_merge = m.deleteBranchAfterMerge ?? false;
    put(b, 'force_merge', m.forceMerge);
    put(b, 'merge_when_checks_succeed', m.mergeWhenChecksSucceed);
    return b;
  });
}

/** Problems of one remark, with the remark's own field names (body, newPosition, ...). */
function checkNewComment(c: NewReviewComment): ValidationError | undefined {
  if (typeof c !== 'object' || c === null) return { field: 'comment', message: 'must be an object' };
  return firstError(
    checkRequiredText('body', c.body),
    checkRequiredText('path', c.path),
    c.newPosition !== undefined ? checkPositiveId('newPosition', c.newPosition) : undefined,
    c.oldPosition !== undefined ? checkPositiveId('oldPosition', c.oldPosition) : undefined,
    c.newPosition !== undefined && c.oldPosition !== undefined
      ? { field: 'oldPosition', message: 'cannot be set together with a new position' }
      : undefined,
    c.extraLinesCount !== undefined && (!Number.isSafeInteger(c.extraLinesCount) || c.extraLinesCount < 0)
      ? { field: 'extraLinesCount', message: 'must be a non-negative integer' }
      : undefined,
    c.extraLinesCount && c.newPosition === undefined && c.oldPosition === undefined
      ? { field: 'extraLinesCount', message: 'needs a position' }
      : undefined,
  );
}

const COMMENT_FIELD_WORDS: Readonly<Record<string, string>> = {
  comment: 'it',
  body: 'its body',
  path: 'its path',
  newPosition: 'its new position',
  oldPosition: 'its old position',
  extraLinesCount: 'its extra lines count',
};

/** A remark of a review's list: field `comments`, the position and the problem in the message. */
function checkListedComment(c: NewReviewComment, i: number): ValidationError | undefined {
  const e = checkNewComment(c);
  return (
    e && { field: 'comments', message: `comment ${i}: ${COMMENT_FIELD_WORDS[e.field] ?? 'it'} ${e.message}` }
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
  return result(checkNewComment(c), () => encodeNewReviewComment(c));
}

export function encodeCreateReview(r: CreateReview): Validated<Json> {
  const error = firstError(
    r.event !== undefined && !isCase(REVIEW_STATE_WIRE, r.event)
      ? { field: 'event', message: 'unknown review state' }
      : undefined,
    // Gitea 1.26 would file a RequestReview event as a pending draft; asking for a review is requestReviewers.
    r.event === 'RequestReview'
      ? { field: 'event', message: 'request-review is not a review event' }
      : undefined,
    checkSha('commit', r.commit),
    r.comments !== undefined && !Array.isArray(r.comments)
      ? { field: 'comments', message: 'must be a list' }
      : undefined,
    ...(Array.isArray(r.comments) ? r.comments : []).map(checkListedComment),
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
  const error = isCase(REVIEW_STATE_WIRE, s.event)
    ? undefined
    : { field: 'event', message: 'unknown review state' };
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
  const error = isCase(DIFF_FORMAT_WIRE, d.format)
    ? undefined
    : { field: 'format', message: 'must be diff or patch' };
  return result(error, () => ({
    suffix: DIFF_FORMAT_WIRE[d.format],
    query: d.includeBinary ? [['binary', 'true']] : [],
  }));
}
