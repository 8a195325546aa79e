/**
 * The client: one method per endpoint, each validating its input, sending one request (retried
 * only for safe methods), and returning a {@link ForgeResult}.
 */

import { ForgeConfig, type ForgeConfigInput } from './config.js';
import { UPDATE_STYLE_WIRE, type UpdateStyle } from './enums.js';
import type { PullRequestNumber, ReviewCommentId, ReviewId } from './ids.js';
import { type Decoder, decodeJsonText, listOrNull } from './json.js';
import {
  type ChangedFile,
  decodeChangedFile,
  decodePullRequest,
  decodeReview,
  decodeReviewComment,
  decodeServerVersion,
  type PullRequest,
  type Review,
  type ReviewComment,
  type ServerVersion,
} from './models.js';
import { collectAll, nextPageOf, type Page, paginate } from './paging.js';
import {
  type CreatePullRequest,
  type CreateReview,
  checkPaging,
  type DiffRequest,
  type DismissReview,
  type EditPullRequest,
  encodeCreatePullRequest,
  encodeCreateReview,
  encodeDiffRequest,
  encodeDismissReview,
  encodeEditPullRequest,
  encodeMergePullRequest,
  encodePullRequestQuery,
  encodeReviewRequest,
  encodeSubmitReview,
  type MergePullRequest,
  type NewReviewComment,
  type Paging,
  type PullRequestHead,
  type PullRequestQuery,
  pagingQuery,
  type ReviewRequest,
  type SubmitReview,
  validateNewReviewComment,
} from './requests.js';
import { type CallContext, decodeApiErrorBody, type ForgeResult, validationFailure } from './result.js';
import { Wire, type WireOutcome, type WireRequest } from './transport.js';
import { checkPositiveId, parseOwner, parseRepoName, type ValidationError } from './validation.js';

/** A repository by owner and name; both are validated on every call. */
export interface RepoRef {
  readonly owner: string;
  readonly repo: string;
}

/** What a merge request achieved: merged now (200), or scheduled to merge when checks pass (201). */
export type MergeOutcome = { readonly kind: 'merged' } | { readonly kind: 'scheduled' };

/** The answer of {@link ForgeClient.request}. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

export interface RawRequest {
  /** Operation id recorded in the call context; default `raw`. */
  readonly operation?: string;
  readonly method: WireRequest['method'];
  /** Path below the base URI, starting with `/`, already percent-encoded. */
  readonly path: string;
  readonly query?: readonly (readonly [string, string])[];
  readonly body?: unknown;
  readonly signal?: AbortSignal;
}

/** Per-call options. */
export interface CallOptions {
  readonly signal?: AbortSignal;
}

interface Call<T> {
  readonly operation: string;
  readonly method: WireRequest['method'];
  readonly path: string;
  readonly query?: readonly (readonly [string, string])[];
  readonly body?: unknown;
  readonly decode: (text: string) => ReturnType<typeof decodeJsonText<T>>;
  readonly download?: boolean;
  readonly signal?: AbortSignal | undefined;
}

const enc = encodeURIComponent;

/**
 * Typed client for the pull-request API of a Gitea or Forgejo instance.
 *
 * @example
 * const client = ForgeClient.create({
 *   baseUri: 'https://gitea.example.org/api/v1',
 *   userAgent: 'release-bot/1.0',
 *   auth: tokenAuth(process.env.GITEA_TOKEN ?? ''),
 * });
 * const pr = await client.pulls.get({ owner: 'acme', repo: 'web' }, pullRequestNumber(42));
 * if (pr.ok) console.log(pr.value.state.kind);
 * else console.error(describeFailure(pr.failure));
 */
export class ForgeClient {
  readonly config: ForgeConfig;
  readonly #wire: Wire;

  constructor(config: ForgeConfig, opts: { sleep?: (ms: number) => Promise<void> } = {}) {
    this.config = config;
    this.#wire = new Wire(config, opts);
  }

  /** Validates the configuration and builds a client; throws {@link ForgeConfigError} when it is invalid. */
  static create(input: ForgeConfigInput): ForgeClient {
    const cfg = ForgeConfig.create(input);
    if (!cfg.ok) throw new ForgeConfigError(cfg.error);
    return new ForgeClient(cfg.value);
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.#wire.close();
  }

  // ---- plumbing ---------------------------------------------------------------------------------

  #send(c: Omit<Call<unknown>, 'decode'>): Promise<WireOutcome> {
    return this.#wire.send({
      operation: c.operation,
      method: c.method,
      path: c.path,
      ...(c.query ? { query: c.query } : {}),
      ...(c.body !== undefined ? { body: c.body } : {}),
      ...(c.signal ? { signal: c.signal } : {}),
      accept: c.download ? 'text/plain, */*' : 'application/json',
      maxBodyBytes: c.download ? this.config.maxDownloadBodyBytes : this.config.maxResponseBodyBytes,
    });
  }

  /** Turns a wire outcome into a result: transport failure, api failure (non-2xx), decode failure or value. */
  #interpret<T>(out: WireOutcome, decode: Call<T>['decode']): ForgeResult<T> {
    if (!out.ok)
      return {
        ok: false,
        failure: { kind: 'transport', cause: out.cause, detail: out.detail, context: out.context },
      };
    const { status, body } = out.response;
    const text = body.toString('utf8');
    if (status < 200 || status > 299) {
      return {
        ok: false,
        failure: { kind: 'api', status, body: decodeApiErrorBody(text), context: out.context },
      };
    }
    const decoded = decode(text);
    if (!decoded.ok) {
      const { path, message } = decoded.problem;
      return { ok: false, failure: { kind: 'decode', status, path, message, context: out.context } };
    }
    return { ok: true, value: decoded.value, context: out.context };
  }

  async #call<T>(c: Call<T>): Promise<ForgeResult<T>> {
    return this.#interpret(await this.#send(c), c.decode);
  }

  async #page<T>(
    c: Omit<Call<T[]>, 'decode'> & { item: Decoder<T>; paging: Required<Paging> },
  ): Promise<ForgeResult<Page<T>>> {
    const out = await this.#send(c);
    const r = this.#interpret(out, (text) => decodeJsonText(listOrNull(c.item), text));
    if (!r.ok || !out.ok) return r as ForgeResult<never>;
    const headers = out.response.headers;
    const link = first(headers.link);
    const total = Number(first(headers['x-total-count']));
    const totalCount = Number.isSafeInteger(total) && total >= 0 ? total : undefined;
    const next = nextPageOf(c.paging.page, c.paging.pageSize, r.value.length, {
      ...(link !== undefined ? { link } : {}),
      ...(totalCount !== undefined ? { totalCount } : {}),
    });
    return {
      ok: true,
      value: {
        items: r.value,
        page: c.paging.page,
        ...(next ? { next } : {}),
        ...(totalCount !== undefined && first(headers['x-total-count']) !== undefined ? { totalCount } : {}),
        context: r.context,
      },
      context: r.context,
    };
  }

  #paging(p: Paging | undefined): Required<Paging> {
    return { page: p?.page ?? 1, pageSize: p?.pageSize ?? this.config.defaultPageSize };
  }

  // ---- operations -------------------------------------------------------------------------------

  /** Pull request operations. */
  readonly pulls = {
    /**
     * One page of pull requests. `query.head` is applied by the client (Gitea 1.26 has no head
     * filter), so such a page may hold fewer items than the server sent.
     */
    list: async (
      repo: RepoRef,
      query: PullRequestQuery = {},
      paging?: Paging,
      opts: CallOptions = {},
    ): Promise<ForgeResult<Page<PullRequest>>> => {
      const p = this.#paging(paging);
      const path = repoPath(repo);
      if (!path.ok) return validationFailure(path.error);
      const q = encodePullRequestQuery(query, p);
      if (!q.ok) return validationFailure(q.error);
      const page = await this.#page({
        operation: 'pulls.list',
        method: 'GET',
        path: `${path.value}/pulls`,
        query: q.value,
        item: decodePullRequest,
        paging: p,
        signal: opts.signal,
      });
      if (!page.ok || query.head === undefined) return page;
      const head = query.head;
      return {
        ...page,
        value: { ...page.value, items: page.value.items.filter((pr) => headMatches(pr, head)) },
      };
    },

    /** Every page of pull requests, as an async iterator of page results. */
    iterate: (repo: RepoRef, query: PullRequestQuery = {}, paging?: Paging, opts: CallOptions = {}) =>
      paginate(
        (p) =>
          this.pulls.list(
            repo,
            query,
            { page: p.page, pageSize: p.pageSize ?? paging?.pageSize ?? this.config.defaultPageSize },
            opts,
          ),
        {
          ...(paging?.page ? { page: paging.page } : {}),
        },
      ),

    /**
     * Every pull request matching the query, all pages read, each once (a multi-label filter makes
     * Gitea repeat a pull request once per matching label).
     */
    listAll: async (
      repo: RepoRef,
      query: PullRequestQuery = {},
      paging?: Paging,
      opts: CallOptions = {},
    ): Promise<ForgeResult<PullRequest[]>> => {
      const r = await collectAll((p) =>
        this.pulls.list(
          repo,
          query,
          { page: p.page, pageSize: p.pageSize ?? paging?.pageSize ?? this.config.defaultPageSize },
          opts,
        ),
      );
      if (!r.ok) return r;
      const seen = new Set<number>();
      return {
        ...r,
        value: r.value.filter((pr) => {
          if (seen.has(pr.id)) return false;
          seen.add(pr.id);
          return true;
        }),
      };
    },

    get: async (
      repo: RepoRef,
      number: PullRequestNumber,
      opts: CallOptions = {},
    ): Promise<ForgeResult<PullRequest>> => {
      const path = pullPath(repo, number);
      if (!path.ok) return validationFailure(path.error);
      return this.#call({
        operation: 'pulls.get',
        method: 'GET',
        path: path.value,
        decode: (t) => decodeJsonText(decodePullRequest, t),
        signal: opts.signal,
      });
    },

    create: async (
      repo: RepoRef,
      input: CreatePullRequest,
      opts: CallOptions = {},
    ): Promise<ForgeResult<PullRequest>> => {
      const path = repoPath(repo);
      if (!path.ok) return validationFailure(path.error);
      const body = encodeCreatePullRequest(input);
      if (!body.ok) return validationFailure(body.error);
      return this.#call({
        operation: 'pulls.create',
        method: 'POST',
        path: `${path.value}/pulls`,
        body: body.value,
        decode: (t) => decodeJsonText(decodePullRequest, t),
        signal: opts.signal,
      });
    },

    /** PATCH; an empty edit changes nothing. Gitea answers 201. */
    edit: async (
      repo: RepoRef,
      number: PullRequestNumber,
      input: EditPullRequest,
      opts: CallOptions = {},
    ): Promise<ForgeResult<PullRequest>> => {
      const path = pullPath(repo, number);
      if (!path.ok) return validationFailure(path.error);
      const body = encodeEditPullRequest(input);
      if (!body.ok) return validationFailure(body.error);
      return this.#call({
        operation: 'pulls.edit',
        method: 'PATCH',
        path: path.value,
        body: body.value,
        decode: (t) => decodeJsonText(decodePullRequest, t),
        signal: opts.signal,
      });
    },

    /** One page of changed files (no diff text). */
    files: async (
      repo: RepoRef,
      number: PullRequestNumber,
      paging?: Paging,
      opts: CallOptions = {},
    ): Promise<ForgeResult<Page<ChangedFile>>> => {
      const path = pullPath(repo, number);
      if (!path.ok) return validationFailure(path.error);
      const p = this.#paging(paging);
      const pe = checkPaging(p);
      if (pe) return validationFailure(pe);
      return this.#page({
        operation: 'pulls.files',
        method: 'GET',
        path: `${path.value}/files`,
        query: pagingQuery(p),
        item: decodeChangedFile,
        paging: p,
        signal: opts.signal,
      });
    },

    /** Every changed file, all pages read. */
    allFiles: (repo: RepoRef, number: PullRequestNumber, paging?: Paging, opts: CallOptions = {}) =>
      collectAll((p) =>
        this.pulls.files(
          repo,
          number,
          { page: p.page, pageSize: p.pageSize ?? paging?.pageSize ?? this.config.defaultPageSize },
          opts,
        ),
      ),

    /** The diff or patch document, bounded by maxDownloadBodyBytes. */
    diff: async (
      repo: RepoRef,
      number: PullRequestNumber,
      input: DiffRequest,
      opts: CallOptions = {},
    ): Promise<ForgeResult<string>> => {
      const path = pullPath(repo, number);
      if (!path.ok) return validationFailure(path.error);
      const d = encodeDiffRequest(input);
      if (!d.ok) return validationFailure(d.error);
      return this.#call({
        operation: 'pulls.diff',
        method: 'GET',
        path: `${path.value}.${d.value.suffix}`,
        query: d.value.query,
        download: true,
        decode: (t) => ({ ok: true, value: t }),
        signal: opts.signal,
      });
    },

    /** Merges. Never retried by the library; pass `headCommit` to make a repeat after a timeout safe. */
    merge: async (
      repo: RepoRef,
      number: PullRequestNumber,
      input: MergePullRequest,
      opts: CallOptions = {},
    ): Promise<ForgeResult<MergeOutcome>> => {
      const path = pullPath(repo, number);
      if (!path.ok) return validationFailure(path.error);
      const body = encodeMergePullRequest(input);
      if (!body.ok) return validationFailure(body.error);
      const r = await this.#call<true>({
        operation: 'pulls.merge',
        method: 'POST',
        path: `${path.value}/merge`,
        body: body.value,
        decode: () => ({ ok: true, value: true }),
        signal: opts.signal,
      });
      if (!r.ok) return r;
      return {
        ok: true,
        value: r.context.status === 201 ? { kind: 'scheduled' } : { kind: 'merged' },
        context: r.context,
      };
    },

    /** Brings the head branch up to date with the base, by a merge commit or by a rebase. */
    update: async (
      repo: RepoRef,
      number: PullRequestNumber,
      style: UpdateStyle,
      opts: CallOptions = {},
    ): Promise<ForgeResult<void>> => {
      const path = pullPath(repo, number);
      if (!path.ok) return validationFailure(path.error);
      if (!(style in UPDATE_STYLE_WIRE))
        return validationFailure({ field: 'style', message: 'must be Merge or Rebase' });
      return this.#call<void>({
        operation: 'pulls.update',
        method: 'POST',
        path: `${path.value}/update`,
        query: [['style', UPDATE_STYLE_WIRE[style]]],
        decode: () => ({ ok: true, value: undefined }),
        signal: opts.signal,
      });
    },
  };

  /** Review operations. */
  readonly reviews = {
    /** One page of reviews, review requests included (state RequestReview): filter before counting approvals. */
    list: async (
      repo: RepoRef,
      number: PullRequestNumber,
      paging?: Paging,
      opts: CallOptions = {},
    ): Promise<ForgeResult<Page<Review>>> => {
      const path = pullPath(repo, number);
      if (!path.ok) return validationFailure(path.error);
      const p = this.#paging(paging);
      const pe = checkPaging(p);
      if (pe) return validationFailure(pe);
      return this.#page({
        operation: 'reviews.list',
        method: 'GET',
        path: `${path.value}/reviews`,
        query: pagingQuery(p),
        item: decodeReview,
        paging: p,
        signal: opts.signal,
      });
    },

    listAll: (repo: RepoRef, number: PullRequestNumber, paging?: Paging, opts: CallOptions = {}) =>
      collectAll((p) =>
        this.reviews.list(
          repo,
          number,
          { page: p.page, pageSize: p.pageSize ?? paging?.pageSize ?? this.config.defaultPageSize },
          opts,
        ),
      ),

    get: (repo: RepoRef, number: PullRequestNumber, id: ReviewId, opts: CallOptions = {}) =>
      this.#reviewCall('reviews.get', 'GET', repo, number, id, '', undefined, opts),

    create: async (
      repo: RepoRef,
      number: PullRequestNumber,
      input: CreateReview = {},
      opts: CallOptions = {},
    ): Promise<ForgeResult<Review>> => {
      const path = pullPath(repo, number);
      if (!path.ok) return validationFailure(path.error);
      const body = encodeCreateReview(input);
      if (!body.ok) return validationFailure(body.error);
      return this.#call({
        operation: 'reviews.create',
        method: 'POST',
        path: `${path.value}/reviews`,
        body: body.value,
        decode: (t) => decodeJsonText(decodeReview, t),
        signal: opts.signal,
      });
    },

    submit: async (
      repo: RepoRef,
      number: PullRequestNumber,
      id: ReviewId,
      input: SubmitReview,
      opts: CallOptions = {},
    ) => {
      const body = encodeSubmitReview(input);
      if (!body.ok) return validationFailure(body.error);
      return this.#reviewCall('reviews.submit', 'POST', repo, number, id, '', body.value, opts);
    },

    dismiss: async (
      repo: RepoRef,
      number: PullRequestNumber,
      id: ReviewId,
      input: DismissReview = {},
      opts: CallOptions = {},
    ) => {
      const body = encodeDismissReview(input);
      if (!body.ok) return validationFailure(body.error);
      return this.#reviewCall('reviews.dismiss', 'POST', repo, number, id, '/dismissals', body.value, opts);
    },

    undismiss: (repo: RepoRef, number: PullRequestNumber, id: ReviewId, opts: CallOptions = {}) =>
      this.#reviewCall('reviews.undismiss', 'POST', repo, number, id, '/undismissals', undefined, opts),

    /** Irreversible. */
    delete: async (
      repo: RepoRef,
      number: PullRequestNumber,
      id: ReviewId,
      opts: CallOptions = {},
    ): Promise<ForgeResult<void>> => {
      const path = reviewPath(repo, number, id);
      if (!path.ok) return validationFailure(path.error);
      return this.#call<void>({
        operation: 'reviews.delete',
        method: 'DELETE',
        path: path.value,
        decode: () => ({ ok: true, value: undefined }),
        signal: opts.signal,
      });
    },

    listComments: async (
      repo: RepoRef,
      number: PullRequestNumber,
      id: ReviewId,
      opts: CallOptions = {},
    ): Promise<ForgeResult<ReviewComment[]>> => {
      const path = reviewPath(repo, number, id);
      if (!path.ok) return validationFailure(path.error);
      return this.#call({
        operation: 'reviews.comments.list',
        method: 'GET',
        path: `${path.value}/comments`,
        decode: (t) => decodeJsonText(listOrNull(decodeReviewComment), t),
        signal: opts.signal,
      });
    },

    /** Adds a remark to a review (Forgejo; Gitea 1.26 has no such route and answers 404). */
    createComment: async (
      repo: RepoRef,
      number: PullRequestNumber,
      id: ReviewId,
      input: NewReviewComment,
      opts: CallOptions = {},
    ): Promise<ForgeResult<ReviewComment>> => {
      const path = reviewPath(repo, number, id);
      if (!path.ok) return validationFailure(path.error);
      const body = validateNewReviewComment(input);
      if (!body.ok) return validationFailure(body.error);
      return this.#call({
        operation: 'reviews.comments.create',
        method: 'POST',
        path: `${path.value}/comments`,
        body: body.value,
        decode: (t) => decodeJsonText(decodeReviewComment, t),
        signal: opts.signal,
      });
    },

    /** One remark of a review (Forgejo; Gitea 1.26 answers 404). */
    getComment: async (
      repo: RepoRef,
      number: PullRequestNumber,
      id: ReviewId,
      comment: ReviewCommentId,
      opts: CallOptions = {},
    ): Promise<ForgeResult<ReviewComment>> => {
      const path = reviewPath(repo, number, id);
      if (!path.ok) return validationFailure(path.error);
      const ce = checkPositiveId('commentId', comment);
      if (ce) return validationFailure(ce);
      return this.#call({
        operation: 'reviews.comments.get',
        method: 'GET',
        path: `${path.value}/comments/${comment}`,
        decode: (t) => decodeJsonText(decodeReviewComment, t),
        signal: opts.signal,
      });
    },

    /** Asks accounts (or teams) for a review; answers the request-review rows created. */
    requestReviewers: async (
      repo: RepoRef,
      number: PullRequestNumber,
      input: ReviewRequest,
      opts: CallOptions = {},
    ): Promise<ForgeResult<Review[]>> => {
      const path = pullPath(repo, number);
      if (!path.ok) return validationFailure(path.error);
      const body = encodeReviewRequest(input);
      if (!body.ok) return validationFailure(body.error);
      return this.#call({
        operation: 'reviews.requestReviewers',
        method: 'POST',
        path: `${path.value}/requested_reviewers`,
        body: body.value,
        decode: (t) =>
          t.trim() === '' ? { ok: true, value: [] } : decodeJsonText(listOrNull(decodeReview), t),
        signal: opts.signal,
      });
    },

    removeReviewRequests: async (
      repo: RepoRef,
      number: PullRequestNumber,
      input: ReviewRequest,
      opts: CallOptions = {},
    ): Promise<ForgeResult<void>> => {
      const path = pullPath(repo, number);
      if (!path.ok) return validationFailure(path.error);
      const body = encodeReviewRequest(input);
      if (!body.ok) return validationFailure(body.error);
      return this.#call<void>({
        operation: 'reviews.removeReviewRequests',
        method: 'DELETE',
        path: `${path.value}/requested_reviewers`,
        body: body.value,
        decode: () => ({ ok: true, value: undefined }),
        signal: opts.signal,
      });
    },
  };

  async #reviewCall(
    operation: string,
    method: 'GET' | 'POST',
    repo: RepoRef,
    number: PullRequestNumber,
    id: ReviewId,
    suffix: string,
    body: unknown,
    opts: CallOptions,
  ): Promise<ForgeResult<Review>> {
    const path = reviewPath(repo, number, id);
    if (!path.ok) return validationFailure(path.error);
    return this.#call({
      operation,
      method,
      path: `${path.value}${suffix}`,
      ...(body !== undefined ? { body } : {}),
      decode: (t) => decodeJsonText(decodeReview, t),
      signal: opts.signal,
    });
  }

  /** `GET /version`: an opaque string, compared for equality only. */
  version(opts: CallOptions = {}): Promise<ForgeResult<ServerVersion>> {
    return this.#call({
      operation: 'misc.version',
      method: 'GET',
      path: '/version',
      decode: (t) => decodeJsonText(decodeServerVersion, t),
      signal: opts.signal,
    });
  }

  /**
   * An arbitrary call below the base URI, with the same auth, bounds, retry policy and failure
   * values as the typed operations. A non-2xx status is an `api` failure.
   */
  async request(req: RawRequest): Promise<ForgeResult<RawResponse>> {
    if (!req.path.startsWith('/') || /[?#]/.test(req.path) || req.path.split('/').includes('..')) {
      return validationFailure({
        field: 'path',
        message: 'must start with / and carry no query, fragment or ..',
      });
    }
    const out = await this.#send({
      operation: req.operation ?? 'raw',
      method: req.method,
      path: req.path,
      ...(req.query ? { query: req.query } : {}),
      ...(req.body !== undefined ? { body: req.body } : {}),
      ...(req.signal ? { signal: req.signal } : {}),
    });
    const r = this.#interpret(out, (t) => ({ ok: true, value: t }));
    if (!r.ok || !out.ok) return r as ForgeResult<never>;
    return {
      ok: true,
      value: { status: out.response.status, headers: out.response.headers, text: r.value },
      context: r.context,
    };
  }
}

/** Thrown by {@link ForgeClient.create} for an invalid configuration (a start-up error, never a call error). */
export class ForgeConfigError extends Error {
  constructor(readonly error: ValidationError) {
    super(`invalid forge configuration: ${error.field} ${error.message}`);
    this.name = 'ForgeConfigError';
  }
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function repoPath(r: RepoRef): { ok: true; value: string } | { ok: false; error: ValidationError } {
  const owner = parseOwner(r?.owner);
  if (!owner.ok) return owner;
  const name = parseRepoName(r?.repo);
  if (!name.ok) return name;
  return { ok: true, value: `/repos/${enc(owner.value)}/${enc(name.value)}` };
}

function pullPath(
  r: RepoRef,
  n: PullRequestNumber,
): { ok: true; value: string } | { ok: false; error: ValidationError } {
  const base = repoPath(r);
  if (!base.ok) return base;
  const e = checkPositiveId('number', n);
  if (e) return { ok: false, error: e };
  return { ok: true, value: `${base.value}/pulls/${n}` };
}

function reviewPath(
  r: RepoRef,
  n: PullRequestNumber,
  id: ReviewId,
): { ok: true; value: string } | { ok: false; error: ValidationError } {
  const base = pullPath(r, n);
  if (!base.ok) return base;
  const e = checkPositiveId('reviewId', id);
  if (e) return { ok: false, error: e };
  return { ok: true, value: `${base.value}/reviews/${id}` };
}

/** Whether a pull request's head is `head` (bare branch: same repository; `owner:branch`: that fork). */
export function headMatches(pr: PullRequest, head: PullRequestHead): boolean {
  const colon = head.indexOf(':');
  const branch = colon < 0 ? head : head.slice(colon + 1);
  if (pr.head.label !== branch && pr.head.ref !== branch) return false;
  if (colon < 0) return pr.head.repositoryId === pr.base.repositoryId;
  const owner = head.slice(0, colon).toLowerCase();
  return pr.head.repository?.owner?.login.toLowerCase() === owner;
}

export type { CallContext };
