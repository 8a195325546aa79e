/**
 * Response models and their decoders. Normalisation rules (spec §2):
 * null lists read as empty, an unrecognised enum value reads as absent, empty text reads as absent
 * where the spec says so, the 0 sentinels of review comments are preserved.
 */

import {
  COMMIT_FILE_STATUS_WIRE,
  type CommitFileStatus,
  fromWire,
  REVIEW_STATE_WIRE,
  type ReviewState,
} from './enums.js';
import type {
  LabelId,
  MilestoneId,
  PullRequestId,
  PullRequestNumber,
  RepositoryId,
  ReviewCommentId,
  ReviewId,
  UserId,
} from './ids.js';
import {
  bool,
  childPath,
  type Decoder,
  defField,
  field,
  instant,
  int,
  JsonDecodeError,
  type JsonPath,
  listOrNull,
  object,
  optField,
  optText,
  str,
} from './json.js';
import { type BranchName, parseBranchName } from './validation.js';

export interface User {
  readonly id: UserId;
  readonly login: string;
  readonly fullName?: string;
  readonly email?: string;
  readonly avatarUrl?: string;
  readonly htmlUrl?: string;
  readonly isAdmin: boolean;
}

export interface Label {
  readonly id: LabelId;
  readonly name: string;
  /** Six hex digits without `#`. */
  readonly color: string;
  readonly description?: string;
  readonly isExclusive: boolean;
  readonly isArchived: boolean;
}

export interface Milestone {
  readonly id: MilestoneId;
  readonly title: string;
  readonly description?: string;
  /** `open` or `closed`; absent when unrecognised. */
  readonly state?: 'open' | 'closed';
  readonly openIssues: number;
  readonly closedIssues: number;
  readonly dueOn?: Date;
  readonly closedAt?: Date;
}

export interface Repository {
  readonly id: RepositoryId;
  readonly name: string;
  readonly fullName: string;
  readonly owner?: User;
  readonly isPrivate: boolean;
  readonly isFork: boolean;
  readonly defaultBranch?: string;
  readonly htmlUrl?: string;
  readonly cloneUrl?: string;
}

export interface PullRequestBranch {
  readonly label: string;
  /** Absent when the wire value fails branch-name validation. May be `refs/pull/<n>/head`. */
  readonly ref?: BranchName;
  readonly repository?: Repository;
  /** Comparing base and head ids tells a fork pull request. */
  readonly repositoryId: RepositoryId;
  readonly sha: string;
}

/** Evidence of a merge; a listing may omit pieces that a single read carries. */
export interface MergeEvidence {
  readonly mergedAt?: Date;
  readonly mergeCommitSha?: string;
  readonly mergedBy?: User;
}

/** Derived from the wire's `state`, `closed_at`, `merged`, `merged_at`, `merge_commit_sha`, `merged_by`. */
export type PullRequestState =
  | { readonly kind: 'open' }
  | { readonly kind: 'closed'; readonly closedAt?: Date }
  | ({ readonly kind: 'merged'; readonly closedAt?: Date } & MergeEvidence);

export interface PullRequest {
  readonly id: PullRequestId;
  readonly number: PullRequestNumber;
  readonly title: string;
  /** Empty text reads as absent. */
  readonly body?: string;
  readonly state: PullRequestState;
  readonly isDraft: boolean;
  /** Advisory; may be stale. */
  readonly isMergeable?: boolean;
  readonly isLocked: boolean;
  readonly allowsMaintainerEdit: boolean;
  /** Absent for imported content. */
  readonly author?: User;
  readonly assignees: readonly User[];
  readonly requestedReviewers: readonly User[];
  readonly labels: readonly Label[];
  readonly milestone?: Milestone;
  readonly base: PullRequestBranch;
  readonly head: PullRequestBranch;
  readonly mergeBase: string;
  readonly changedFileCount: number;
  readonly additions?: number;
  readonly deletions?: number;
  readonly commentCount: number;
  readonly reviewCommentCount: number;
  readonly htmlUrl?: string;
  readonly diffUrl: string;
  readonly patchUrl: string;
  readonly dueDate?: Date;
  readonly createdAt?: Date;
  readonly updatedAt?: Date;
}

export interface ChangedFile {
  readonly filename: string;
  /** Present for renames only. */
  readonly previousFilename?: string;
  /** Absent when unrecognised. */
  readonly status?: CommitFileStatus;
  readonly additions: number;
  readonly deletions: number;
  /** The server's own total, not recomputed. */
  readonly changes: number;
  readonly htmlUrl?: string;
  readonly contentsUrl: string;
  readonly rawUrl: string;
}

export interface Review {
  readonly id: ReviewId;
  /** The reviewer, or the person asked; absent on a team review request (teams are not modelled). */
  readonly author?: User;
  /** Absent for an unrecognised value, including the empty string of stateless rows. */
  readonly state?: ReviewState;
  /** Empty text reads as absent. */
  readonly body?: string;
  /** Absent for a review request. */
  readonly commit?: string;
  /** Absent for a review request. */
  readonly htmlUrl?: string;
  /** 0 for a request or a summary-only review. */
  readonly commentCount: number;
  readonly isDismissed: boolean;
  readonly isOfficial: boolean;
  readonly isStale: boolean;
  readonly submittedAt?: Date;
  readonly updatedAt?: Date;
}

export interface ReviewComment {
  readonly id: ReviewCommentId;
  /** Absent when missing or the placeholder 0. */
  readonly reviewId?: ReviewId;
  readonly author?: User;
  /** Markdown. */
  readonly body: string;
  readonly path: string;
  /** Line on the new side; 0 when the remark is not on that side. */
  readonly position: number;
  /** Line on the old side; 0 when the remark is not on that side. */
  readonly originalPosition: number;
  /** 0 is a single line. Gitea 1.26 does not report spans, so this is 0 there. */
  readonly extraLinesCount: number;
  readonly commit: string;
  readonly originalCommit: string;
  readonly diffHunk: string;
  readonly resolver?: User;
  readonly htmlUrl?: string;
  readonly createdAt?: Date;
}

/** The instance's version: raw, never blank, never parsed or ordered; compare for equality only. */
export interface ServerVersion {
  readonly raw: string;
}

// ---- decoders -----------------------------------------------------------------------------------

const id =
  <T>(): Decoder<T> =>
  (v, p) =>
    int(v, p) as T;

export const decodeUser: Decoder<User> = (v, p) => {
  const o = object(v, p);
  return {
    id: field(o, p, 'id', id<UserId>()),
    login: field(o, p, 'login', str),
    ...opt('fullName', optText(o, p, 'full_name')),
    ...opt('email', optText(o, p, 'email')),
    ...opt('avatarUrl', optText(o, p, 'avatar_url')),
    ...opt('htmlUrl', optText(o, p, 'html_url')),
    isAdmin: defField(o, p, 'is_admin', bool, false),
  };
};

export const decodeLabel: Decoder<Label> = (v, p) => {
  const o = object(v, p);
  return {
    id: field(o, p, 'id', id<LabelId>()),
    name: field(o, p, 'name', str),
    color: defField(o, p, 'color', str, '').replace(/^#/, ''),
    ...opt('description', optText(o, p, 'description')),
    isExclusive: defField(o, p, 'exclusive', bool, false),
    isArchived: defField(o, p, 'is_archived', bool, false),
  };
};

export const decodeMilestone: Decoder<Milestone> = (v, p) => {
  const o = object(v, p);
  const rawState = optField(o, p, 'state', str);
  const state: 'open' | 'closed' | undefined =
    rawState === 'open' || rawState === 'closed' ? rawState : undefined;
  return {
    id: field(o, p, 'id', id<MilestoneId>()),
    title: field(o, p, 'title', str),
    ...opt('description', optText(o, p, 'description')),
    ...opt('state', state),
    openIssues: defField(o, p, 'open_issues', int, 0),
    closedIssues: defField(o, p, 'closed_issues', int, 0),
    ...opt('dueOn', optField(o, p, 'due_on', instant)),
    ...opt('closedAt', optField(o, p, 'closed_at', instant)),
  };
};

export const decodeRepository: Decoder<Repository> = (v, p) => {
  const o = object(v, p);
  return {
    id: field(o, p, 'id', id<RepositoryId>()),
    name: field(o, p, 'name', str),
    fullName: defField(o, p, 'full_name', str, ''),
    ...opt('owner', optField(o, p, 'owner', decodeUser)),
    isPrivate: defField(o, p, 'private', bool, false),
    isFork: defField(o, p, 'fork', bool, false),
    ...opt('defaultBranch', optText(o, p, 'default_branch')),
    ...opt('htmlUrl', optText(o, p, 'html_url')),
    ...opt('cloneUrl', optText(o, p, 'clone_url')),
  };
};

export const decodeBranch: Decoder<PullRequestBranch> = (v, p) => {
  const o = object(v, p);
  const rawRef = defField(o, p, 'ref', str, '');
  const ref = parseBranchName(rawRef);
  return {
    label: defField(o, p, 'label', str, ''),
    ...opt('ref', ref.ok ? ref.value : undefined),
    ...opt('repository', optField(o, p, 'repo', decodeRepository)),
    repositoryId: field(o, p, 'repo_id', id<RepositoryId>()),
    sha: defField(o, p, 'sha', str, ''),
  };
};

/** Merge evidence first: a merged pull request is `closed` with `merged: true` on the wire. */
function decodeState(o: Record<string, unknown>, p: JsonPath): PullRequestState {
  const merged = defField(o, p, 'merged', bool, false);
  const mergedAt = optField(o, p, 'merged_at', instant);
  const mergeCommitSha = optText(o, p, 'merge_commit_sha');
  const mergedBy = optField(o, p, 'merged_by', decodeUser);
  const closedAt = optField(o, p, 'closed_at', instant);
  if (merged || mergedAt !== undefined || mergeCommitSha !== undefined || mergedBy !== undefined) {
    return {
      kind: 'merged',
      ...opt('closedAt', closedAt),
      ...opt('mergedAt', mergedAt),
      ...opt('mergeCommitSha', mergeCommitSha),
      ...opt('mergedBy', mergedBy),
    };
  }
  const state = field(o, p, 'state', str);
  if (state === 'open') return { kind: 'open' };
  if (state === 'closed') return { kind: 'closed', ...opt('closedAt', closedAt) };
  throw new JsonDecodeError(childPath(p, 'state'), 'expected open or closed');
}

export const decodePullRequest: Decoder<PullRequest> = (v, p) => {
  const o = object(v, p);
  return {
    id: field(o, p, 'id', id<PullRequestId>()),
    number: field(o, p, 'number', id<PullRequestNumber>()),
    title: defField(o, p, 'title', str, ''),
    ...opt('body', optText(o, p, 'body')),
    state: decodeState(o, p),
    isDraft: defField(o, p, 'draft', bool, false),
    ...opt('isMergeable', optField(o, p, 'mergeable', bool)),
    isLocked: defField(o, p, 'is_locked', bool, false),
    allowsMaintainerEdit: defField(o, p, 'allow_maintainer_edit', bool, false),
    ...opt('author', optField(o, p, 'user', decodeUser)),
    assignees: field(o, p, 'assignees', listOrNull(decodeUser)),
    requestedReviewers: field(o, p, 'requested_reviewers', listOrNull(decodeUser)),
    labels: field(o, p, 'labels', listOrNull(decodeLabel)),
    ...opt('milestone', optField(o, p, 'milestone', decodeMilestone)),
    base: field(o, p, 'base', decodeBranch),
    head: field(o, p, 'head', decodeBranch),
    mergeBase: defField(o, p, 'merge_base', str, ''),
    changedFileCount: defField(o, p, 'changed_files', int, 0),
    ...opt('additions', optField(o, p, 'additions', int)),
    ...opt('deletions', optField(o, p, 'deletions', int)),
    commentCount: defField(o, p, 'comments', int, 0),
    reviewCommentCount: defField(o, p, 'review_comments', int, 0),
    ...opt('htmlUrl', optText(o, p, 'html_url')),
    diffUrl: defField(o, p, 'diff_url', str, ''),
    patchUrl: defField(o, p, 'patch_url', str, ''),
    ...opt('dueDate', optField(o, p, 'due_date', instant)),
    ...opt('createdAt', optField(o, p, 'created_at', instant)),
    ...opt('updatedAt', optField(o, p, 'updated_at', instant)),
  };
};

export const decodeChangedFile: Decoder<ChangedFile> = (v, p) => {
  const o = object(v, p);
  const status = optField(o, p, 'status', str);
  return {
    filename: field(o, p, 'filename', str),
    ...opt('previousFilename', optText(o, p, 'previous_filename')),
    ...opt('status', status === undefined ? undefined : fromWire(COMMIT_FILE_STATUS_WIRE, status)),
    additions: defField(o, p, 'additions', int, 0),
    deletions: defField(o, p, 'deletions', int, 0),
    changes: defField(o, p, 'changes', int, 0),
    ...opt('htmlUrl', optText(o, p, 'html_url')),
    contentsUrl: defField(o, p, 'contents_url', str, ''),
    rawUrl: defField(o, p, 'raw_url', str, ''),
  };
};

export const decodeReview: Decoder<Review> = (v, p) => {
  const o = object(v, p);
  const state = optField(o, p, 'state', str);
  return {
    id: field(o, p, 'id', id<ReviewId>()),
    ...opt('author', optField(o, p, 'user', decodeUser)),
    ...opt('state', state === undefined ? undefined : fromWire(REVIEW_STATE_WIRE, state)),
    ...opt('body', optText(o, p, 'body')),
    ...opt('commit', optText(o, p, 'commit_id')),
    ...opt('htmlUrl', optText(o, p, 'html_url')),
    commentCount: defField(o, p, 'comments_count', int, 0),
    isDismissed: defField(o, p, 'dismissed', bool, false),
    isOfficial: defField(o, p, 'official', bool, false),
    isStale: defField(o, p, 'stale', bool, false),
    ...opt('submittedAt', nonZeroTime(optField(o, p, 'submitted_at', instant))),
    ...opt('updatedAt', nonZeroTime(optField(o, p, 'updated_at', instant))),
  };
};

export const decodeReviewComment: Decoder<ReviewComment> = (v, p) => {
  const o = object(v, p);
  const reviewIdValue = defField(o, p, 'pull_request_review_id', int, 0);
  return {
    id: field(o, p, 'id', id<ReviewCommentId>()),
    ...opt('reviewId', reviewIdValue === 0 ? undefined : (reviewIdValue as ReviewId)),
    ...opt('author', optField(o, p, 'user', decodeUser)),
    body: defField(o, p, 'body', str, ''),
    path: defField(o, p, 'path', str, ''),
    position: defField(o, p, 'position', int, 0),
    originalPosition: defField(o, p, 'original_position', int, 0),
    extraLinesCount: defField(o, p, 'extra_lines_count', int, 0),
    commit: defField(o, p, 'commit_id', str, ''),
    originalCommit: defField(o, p, 'original_commit_id', str, ''),
    diffHunk: defField(o, p, 'diff_hunk', str, ''),
    ...opt('resolver', optField(o, p, 'resolver', decodeUser)),
    ...opt('htmlUrl', optText(o, p, 'html_url')),
    ...opt('createdAt', nonZeroTime(optField(o, p, 'created_at', instant))),
  };
};

/** `{"version": "..."}`; a blank version is a decode failure. */
export const decodeServerVersion: Decoder<ServerVersion> = (v, p) => {
  const o = object(v, p);
  const raw = field(o, p, 'version', str);
  if (raw.trim() === '') throw new JsonDecodeError(childPath(p, 'version'), 'expected a non-blank version');
  return { raw };
};

/** Equality is the only comparison a version supports. */
export function sameServerVersion(a: ServerVersion, b: ServerVersion): boolean {
  return a.raw === b.raw;
}

/** Go's zero time (`0001-01-01T00:00:00Z`) means "not set". */
function nonZeroTime(d: Date | undefined): Date | undefined {
  return d === undefined || d.getUTCFullYear() <= 1 ? undefined : d;
}

/** `{ key: value }` when value is defined, else `{}` — keeps absent fields absent. */
function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
