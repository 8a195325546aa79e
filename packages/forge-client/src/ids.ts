/**
 * Branded identifiers. Each is a plain number at run time, but the types are pairwise
 * incompatible: passing a {@link ReviewCommentId} where a {@link ReviewId} is expected does not
 * compile, which is what keeps `{id}` and `{comment}` from being swapped in a URL.
 *
 * int64 on the wire; the library accepts only safe integers (up to 2^53 - 1) and refuses larger
 * ones while decoding rather than rounding them.
 */

declare const brand: unique symbol;

/** `T` tagged with the nominal tag `B`. */
export type Branded<T, B extends string> = T & { readonly [brand]: B };

/** Per-repository index of a pull request, used in every URL (`{index}`). */
export type PullRequestNumber = Branded<number, 'PullRequestNumber'>;
/** Instance-wide row id of a pull request; no endpoint accepts it. */
export type PullRequestId = Branded<number, 'PullRequestId'>;
/** Instance-wide id of a review (`{id}`). */
export type ReviewId = Branded<number, 'ReviewId'>;
/** Instance-wide id of an inline review comment (`{comment}`). */
export type ReviewCommentId = Branded<number, 'ReviewCommentId'>;
export type RepositoryId = Branded<number, 'RepositoryId'>;
export type UserId = Branded<number, 'UserId'>;
export type LabelId = Branded<number, 'LabelId'>;
export type MilestoneId = Branded<number, 'MilestoneId'>;

/** Tags a number read from elsewhere (a CLI argument, a database) as a pull request number. */
export const pullRequestNumber = (n: number): PullRequestNumber => n as PullRequestNumber;
export const pullRequestId = (n: number): PullRequestId => n as PullRequestId;
export const reviewId = (n: number): ReviewId => n as ReviewId;
export const reviewCommentId = (n: number): ReviewCommentId => n as ReviewCommentId;
export const repositoryId = (n: number): RepositoryId => n as RepositoryId;
export const userId = (n: number): UserId => n as UserId;
export const labelId = (n: number): LabelId => n as LabelId;
export const milestoneId = (n: number): MilestoneId => n as MilestoneId;
