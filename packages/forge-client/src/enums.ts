/**
 * Enumerations and their wire spellings (verified against Gitea 1.26 sources and a live server).
 */

/** Review states. Wire: `APPROVED`, `REQUEST_CHANGES`, `COMMENT`, `PENDING`, `REQUEST_REVIEW`. */
export const ReviewState = {
  Approved: 'Approved',
  RequestChanges: 'RequestChanges',
  Comment: 'Comment',
  Pending: 'Pending',
  RequestReview: 'RequestReview',
} as const;
export type ReviewState = (typeof ReviewState)[keyof typeof ReviewState];

export const REVIEW_STATE_WIRE: Readonly<Record<ReviewState, string>> = Object.freeze({
  Approved: 'APPROVED',
  RequestChanges: 'REQUEST_CHANGES',
  Comment: 'COMMENT',
  Pending: 'PENDING',
  RequestReview: 'REQUEST_REVIEW',
});

/** Merge styles; the wire key of the merge body is `Do`. */
export const MergeStyle = {
  Merge: 'Merge',
  Rebase: 'Rebase',
  RebaseMerge: 'RebaseMerge',
  Squash: 'Squash',
  FastForwardOnly: 'FastForwardOnly',
  ManuallyMerged: 'ManuallyMerged',
} as const;
export type MergeStyle = (typeof MergeStyle)[keyof typeof MergeStyle];

export const MERGE_STYLE_WIRE: Readonly<Record<MergeStyle, string>> = Object.freeze({
  Merge: 'merge',
  Rebase: 'rebase',
  RebaseMerge: 'rebase-merge',
  Squash: 'squash',
  FastForwardOnly: 'fast-forward-only',
  ManuallyMerged: 'manually-merged',
});

/** Sort orders of the pull request list (the server's default, newest first, is "no sort"). */
export const PullRequestSort = {
  Oldest: 'Oldest',
  RecentUpdate: 'RecentUpdate',
  RecentClose: 'RecentClose',
  LeastUpdate: 'LeastUpdate',
  MostComment: 'MostComment',
  LeastComment: 'LeastComment',
  Priority: 'Priority',
} as const;
export type PullRequestSort = (typeof PullRequestSort)[keyof typeof PullRequestSort];

export const PULL_REQUEST_SORT_WIRE: Readonly<Record<PullRequestSort, string>> = Object.freeze({
  Oldest: 'oldest',
  RecentUpdate: 'recentupdate',
  RecentClose: 'recentclose',
  LeastUpdate: 'leastupdate',
  MostComment: 'mostcomment',
  LeastComment: 'leastcomment',
  Priority: 'priority',
});

/** Filter of the list endpoint; omitted means open only. `Closed` includes merged. */
export type StateFilter = 'open' | 'closed' | 'all';

/** Diff document formats: net unified diff (`git apply`) or one mail per commit (`git am`). */
export const DiffFormat = { Diff: 'Diff', Patch: 'Patch' } as const;
export type DiffFormat = (typeof DiffFormat)[keyof typeof DiffFormat];
export const DIFF_FORMAT_WIRE: Readonly<Record<DiffFormat, string>> = Object.freeze({
  Diff: 'diff',
  Patch: 'patch',
});

/** How `update` brings the head branch up to date: a merge commit, or a rebase (every sha changes). */
export const UpdateStyle = { Merge: 'Merge', Rebase: 'Rebase' } as const;
export type UpdateStyle = (typeof UpdateStyle)[keyof typeof UpdateStyle];
export const UPDATE_STYLE_WIRE: Readonly<Record<UpdateStyle, string>> = Object.freeze({
  Merge: 'merge',
  Rebase: 'rebase',
});

/** Status of a changed file. Gitea sends `changed` for an in-place modification. */
export const CommitFileStatus = {
  Added: 'Added',
  Deleted: 'Deleted',
  Modified: 'Modified',
  Changed: 'Changed',
  Renamed: 'Renamed',
  Copied: 'Copied',
  Unchanged: 'Unchanged',
} as const;
export type CommitFileStatus = (typeof CommitFileStatus)[keyof typeof CommitFileStatus];

export const COMMIT_FILE_STATUS_WIRE: Readonly<Record<CommitFileStatus, string>> = Object.freeze({
  Added: 'added',
  Deleted: 'deleted',
  Modified: 'modified',
  Changed: 'changed',
  Renamed: 'renamed',
  Copied: 'copied',
  Unchanged: 'unchanged',
});

/**
 * Whether `value` is a case of `table`. Own keys only: `toString` or `constructor` from an untyped
 * caller are not cases (the `in` operator would accept them).
 */
export function isCase<C extends string>(table: Readonly<Record<C, string>>, value: unknown): value is C {
  return typeof value === 'string' && Object.hasOwn(table, value);
}

/** Reverse lookup: the case of a wire spelling, or undefined for an unknown value. */
export function fromWire<C extends string>(table: Readonly<Record<C, string>>, wire: string): C | undefined {
  for (const key of Object.keys(table) as C[]) if (table[key] === wire) return key;
  return undefined;
}
