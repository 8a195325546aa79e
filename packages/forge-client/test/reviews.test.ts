import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PullRequest, type Review, ReviewState, reviewCommentId, sameRepoHead } from '../src/index.js';
import {
  admin,
  apiStatus,
  branch,
  clientAs,
  commitFile,
  createRepo,
  must,
  reviewer,
  type SeededRepo,
} from './seed.js';

const owner = clientAs('admin');
const rev = clientAs('reviewer');
let repo: SeededRepo;
let pr: PullRequest;

beforeAll(async () => {
  repo = await createRepo('reviews-demo');
  await commitFile(repo, {
    branch: 'review-me',
    path: 'notes.md',
    content: 'line one\nline two\nline three\n',
  });
  pr = must(
    await owner.pulls.create(repo, {
      title: 'Please review',
      head: sameRepoHead(branch('review-me')),
      base: branch('main'),
    }),
  );
});

afterAll(() => {
  owner.close();
  rev.close();
});

describe('review lifecycle', () => {
  let pending: Review;
  let approved: Review;

  it('creates a pending review with a remark on a new-side line', async () => {
    // Without a body Gitea 1.26 refuses even a draft (422), so the draft carries a summary.
    expect(
      apiStatus(
        await rev.reviews.create(repo, pr.number, {
          comments: [{ path: 'notes.md', newPosition: 2, body: 'x' }],
        }),
      ),
    ).toBe(422);
    pending = must(
      await rev.reviews.create(repo, pr.number, {
        body: 'Draft summary',
        comments: [{ path: 'notes.md', newPosition: 2, body: '  Is this line needed?  ' }],
      }),
    );
    expect(pending.state).toBe(ReviewState.Pending);
    expect(pending.author?.login).toBe(reviewer);
    expect(pending.commentCount).toBe(1);
    expect(pending.isDismissed).toBe(false);
  });

  it('lists the remarks of the draft with their 0 sentinels preserved', async () => {
    const comments = must(await rev.reviews.listComments(repo, pr.number, pending.id));
    expect(comments).toHaveLength(1);
    const [c] = comments;
    expect(c?.body).toBe('Is this line needed?'); // trimmed before sending
    expect(c?.path).toBe('notes.md');
    expect(c?.position).toBe(2);
    expect(c?.originalPosition).toBe(0);
    expect(c?.extraLinesCount).toBe(0);
    expect(c?.reviewId).toBe(pending.id);
    expect(c?.author?.login).toBe(reviewer);
    expect(c?.diffHunk).toContain('line two');
  });

  it('answers 405 and 404 for the per-comment endpoints that only Forgejo has', async () => {
    // POST .../reviews/{id}/comments and GET .../comments/{comment} are Forgejo routes. Gitea 1.26
    // routes only GET on .../comments (so POST is 405) and nothing below it (404).
    const created = await rev.reviews.createComment(repo, pr.number, pending.id, {
      path: 'notes.md',
      body: 'x',
    });
    expect(apiStatus(created)).toBe(405);
    const comments = must(await rev.reviews.listComments(repo, pr.number, pending.id));
    const got = await rev.reviews.getComment(repo, pr.number, pending.id, comments[0]!.id);
    expect(apiStatus(got)).toBe(404);
  });

  it('refuses to submit a draft as Pending or RequestReview (422)', async () => {
    expect(
      apiStatus(await rev.reviews.submit(repo, pr.number, pending.id, { event: ReviewState.Pending })),
    ).toBe(422);
    expect(
      apiStatus(await rev.reviews.submit(repo, pr.number, pending.id, { event: ReviewState.RequestReview })),
    ).toBe(422);
  });

  it('submits the draft as a comment review', async () => {
    // Submitting as Comment needs a body on Gitea 1.26 even when the draft has remarks.
    expect(
      apiStatus(await rev.reviews.submit(repo, pr.number, pending.id, { event: ReviewState.Comment })),
    ).toBe(422);
    const submitted = must(
      await rev.reviews.submit(repo, pr.number, pending.id, {
        event: ReviewState.Comment,
        body: 'Two remarks',
      }),
    );
    expect(submitted.body).toBe('Two remarks');
    expect(submitted.state).toBe(ReviewState.Comment);
    expect(submitted.id).toBe(pending.id);
    expect(submitted.commit).toBe(pr.head.sha);
  });

  it('answers 422 for a missing review body; refuses the RequestReview event before sending', async () => {
    expect(apiStatus(await rev.reviews.create(repo, pr.number, { event: ReviewState.RequestChanges }))).toBe(
      422,
    );
    expect(apiStatus(await rev.reviews.create(repo, pr.number, { event: ReviewState.Comment }))).toBe(422);
    const rr = await rev.reviews.create(repo, pr.number, { event: ReviewState.RequestReview, body: 'x' });
    expect(rr).toEqual({
      ok: false,
      failure: {
        kind: 'validation',
        error: { field: 'event', message: 'request-review is not a review event' },
      },
    });
  });

  it('answers 422 when the author approves their own pull request', async () => {
    expect(apiStatus(await owner.reviews.create(repo, pr.number, { event: ReviewState.Approved }))).toBe(422);
  });

  it('approves as the second account', async () => {
    approved = must(await rev.reviews.create(repo, pr.number, { event: ReviewState.Approved, body: 'LGTM' }));
    expect(approved.state).toBe(ReviewState.Approved);
    expect(approved.body).toBe('LGTM');
    expect(approved.isOfficial).toBe(true);
    expect(approved.htmlUrl).toContain('/pulls/');
  });

  it('dismisses the approval (it stays on the listing) and undismisses it', async () => {
    // Dismissing a comment review is refused (403): only approvals and change requests count.
    expect(apiStatus(await owner.reviews.dismiss(repo, pr.number, pending.id, { message: 'no' }))).toBe(403);
    const dismissed = must(
      await owner.reviews.dismiss(repo, pr.number, approved.id, { message: 'stale', priors: false }),
    );
    expect(dismissed.isDismissed).toBe(true);
    const listed = must(await owner.reviews.listAll(repo, pr.number));
    expect(listed.find((r) => r.id === approved.id)?.isDismissed).toBe(true);
    const back = must(await owner.reviews.undismiss(repo, pr.number, approved.id));
    expect(back.isDismissed).toBe(false);
    expect(back.state).toBe(ReviewState.Approved);
  });

  it('deletes a review irreversibly', async () => {
    const draft = must(await rev.reviews.create(repo, pr.number, { body: 'to be deleted' }));
    expect(draft.state).toBe(ReviewState.Pending);
    const del = await rev.reviews.delete(repo, pr.number, draft.id);
    expect(del.ok && del.context.status).toBe(204);
    expect(apiStatus(await rev.reviews.get(repo, pr.number, draft.id))).toBe(404);
  });
});

describe('review requests', () => {
  it('requests a review, shows it as a RequestReview row, and removes the request', async () => {
    await commitFile(repo, { branch: 'asked', path: 'asked.md', content: 'asked\n' });
    const pr = must(
      await owner.pulls.create(repo, {
        title: 'Review request',
        head: sameRepoHead(branch('asked')),
        base: branch('main'),
      }),
    );
    const rows = must(await owner.reviews.requestReviewers(repo, pr.number, { reviewers: [reviewer] }));
    expect(rows).toHaveLength(1);
    expect(rows[0]?.state).toBe(ReviewState.RequestReview);
    expect(rows[0]?.author?.login).toBe(reviewer);
    expect(rows[0]?.commit).toBeUndefined();
    expect(rows[0]?.commentCount).toBe(0);

    const asked = must(await owner.pulls.get(repo, pr.number));
    expect(asked.requestedReviewers.map((u) => u.login)).toEqual([reviewer]);
    const listing = must(await owner.reviews.listAll(repo, pr.number));
    const approvals = listing.filter((r) => r.state === ReviewState.Approved && !r.isDismissed);
    expect(listing.some((r) => r.state === ReviewState.RequestReview)).toBe(true);
    expect(approvals.every((r) => r.author?.login === reviewer)).toBe(true);

    const removed = await owner.reviews.removeReviewRequests(repo, pr.number, { reviewers: [reviewer] });
    expect(removed.ok && removed.context.status).toBe(204);
    expect(must(await owner.pulls.get(repo, pr.number)).requestedReviewers).toEqual([]);
  });

  it('refuses an empty review request before sending it (Gitea itself would answer 201 with no rows)', async () => {
    const r = await owner.reviews.requestReviewers(repo, pr.number, { reviewers: [], teams: [] });
    expect(r).toEqual({
      ok: false,
      failure: {
        kind: 'validation',
        error: { field: 'reviewers', message: 'name at least one reviewer or team' },
      },
    });
  });

  it('answers 404 when asking an account that does not exist', async () => {
    expect(
      apiStatus(await owner.reviews.requestReviewers(repo, pr.number, { reviewers: ['no-such-user'] })),
    ).toBe(404);
  });
});

describe('swapped ids', () => {
  it('answers 404 when a review comment id is used as the review id (raw call; typed calls do not compile)', async () => {
    const draft = must(
      await rev.reviews.create(repo, pr.number, {
        body: 'draft',
        comments: [{ path: 'notes.md', newPosition: 1, body: 'first line' }],
      }),
    );
    const [comment] = must(await rev.reviews.listComments(repo, pr.number, draft.id));
    if (!comment) throw new Error('no comment');
    expect(comment.id).not.toBe(draft.id);
    const right = await rev.request({
      method: 'GET',
      path: `/repos/${admin}/reviews-demo/pulls/${pr.number}/reviews/${draft.id}/comments`,
    });
    expect(right.ok && right.value.status).toBe(200);
    const swapped = await rev.request({
      operation: 'reviews.comments.list',
      method: 'GET',
      path: `/repos/${admin}/reviews-demo/pulls/${pr.number}/reviews/${comment.id}/comments`,
    });
    expect(apiStatus(swapped)).toBe(404);
    // And the typed call with the ids the right way round keeps working.
    expect(reviewCommentId(comment.id)).toBe(comment.id);
  });
});
