import { describe, expectTypeOf, it } from 'vitest';
import type { ForgeClient } from './client.js';
import type { PullRequestNumber, ReviewCommentId, ReviewId } from './ids.js';
import { pullRequestNumber, reviewCommentId, reviewId } from './ids.js';
import { forkHead, type PullRequestHead, sameRepoHead } from './requests.js';
import type { ForgeFailure } from './result.js';
import type { BranchName, Owner } from './validation.js';

/**
 * Type-level tests: they pass when this file compiles (`tsc -b` checks it; vitest runs the
 * assertions as no-ops). Each `@ts-expect-error` line must fail to compile, or tsc reports the
 * directive as unused.
 */
declare const client: ForgeClient;
const repo = { owner: 'o', repo: 'r' };

describe('branded ids', () => {
  it('keeps review ids, review comment ids and pull request numbers apart', () => {
    expectTypeOf<ReviewId>().not.toEqualTypeOf<ReviewCommentId>();
    expectTypeOf<ReviewCommentId>().not.toMatchTypeOf<ReviewId>();
    expectTypeOf<ReviewId>().not.toMatchTypeOf<ReviewCommentId>();
    expectTypeOf<PullRequestNumber>().not.toMatchTypeOf<ReviewId>();
    expectTypeOf<number>().not.toMatchTypeOf<ReviewId>();
    expectTypeOf<ReviewId>().toMatchTypeOf<number>();
  });

  it('does not compile a call with {id} and {comment} swapped', () => {
    const n = pullRequestNumber(1);
    const review = reviewId(2);
    const comment = reviewCommentId(3);
    const ok = () => client.reviews.getComment(repo, n, review, comment);
    // @ts-expect-error a ReviewCommentId is not a ReviewId, and the other way round
    const swapped = () => client.reviews.getComment(repo, n, comment, review);
    // @ts-expect-error a bare number is not a ReviewId
    const bare = () => client.reviews.get(repo, n, 2);
    // @ts-expect-error a review id is not a pull request number
    const wrongIndex = () => client.pulls.get(repo, review);
    expectTypeOf(ok).returns.resolves.toMatchTypeOf<{ ok: boolean }>();
    void swapped;
    void bare;
    void wrongIndex;
  });
});

describe('PullRequestHead', () => {
  it('cannot be made from a plain string', () => {
    expectTypeOf<string>().not.toMatchTypeOf<PullRequestHead>();
    // @ts-expect-error a branch must be validated first
    sameRepoHead('feature');
    // @ts-expect-error owner and branch must be validated first
    forkHead('alice', 'feature');
    expectTypeOf(sameRepoHead).parameter(0).toEqualTypeOf<BranchName>();
    expectTypeOf(forkHead).parameters.toEqualTypeOf<[Owner, BranchName]>();
  });
});

describe('failures', () => {
  it('is a closed union discriminated by kind', () => {
    expectTypeOf<ForgeFailure['kind']>().toEqualTypeOf<'api' | 'validation' | 'transport' | 'decode'>();
  });
});
