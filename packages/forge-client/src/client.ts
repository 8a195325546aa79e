/**
 * The client: one method per endpoint, each validating its input, sending one request (retried
 * only for safe methods), and returning a {@link ForgeResult}.
 */

import { ForgeConfig, type ForgeConfigInput } from './config.js';
import { isCase, UPDATE_STYLE_WIRE, type UpdateStyle } from './enums.js';
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
  headParts,
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
import { serialiseJson, Wire, type WireOptions, type WireOutcome, type WireRequest } from './transport.js';
import {
  checkPositiveId,
  parseOwner,
  parseRepoName,
  type Validated,
  type ValidationError,
  valid,
} from './validation.js';

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
  /** The JSON body, already serialised. */
  readonly body?: string;
  readonly decode: (text: string) => ReturnType<typeof decodeJsonText<T>>;
  /** A plain-text document (diff, patch) rather than JSON: only the Accept header differs. */
  readonly document?: boolean;
  readonly signal?: AbortSignal | undefined;
}

const enc = encodeURIComponent;
type Query = readonly (readonly [string, string])[];

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

  /** `opts` are test hooks (a fake backoff sleep, a shorter idle-socket timeout). */
  constructor(config: ForgeConfig, opts: WireOptions = {}) {
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
      accept: c.document ? 'text/plain, */*' : 'application/json',
      // §8: maxResponseBodyBytes bounds every textual response, diff and patch included;
      // maxDownloadBodyBytes is for archive downloads, which no operation here makes.
      maxBodyBytes: this.config.maxResponseBodyBytes,
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

  /** One operation: every input check first (a failure sends nothing), then one request. */
  async #op<T>(
    operation: string,
    method: WireRequest['method'],
    path: Validated<string>,
    decode: Call<T>['decode'],
    extra: { body?: Validated<unknown>; query?: Query; document?: boolean; opts?: CallOptions } = {},
  ): Promise<ForgeResult<T>> {
    if (!path.ok) return validationFailure(path.error);
    if (extra.body && !extra.body.ok) return validationFailure(extra.body.error);
    const body = extra.body?.ok ? jsonBody(extra.body.value) : undefined;
    if (body && !body.ok) return validationFailure(body.error);
    return this.#call({
      operation,
      method,
      path: path.value,
      ...(extra.query ? { query: extra.query } : {}),
      ...(body?.ok ? { body: body.value } : {}),
      ...(extra.document ? { document: true } : {}),
      decode,
      signal: extra.opts?.signal,
    });
  }

  /** One page of a listing under `path`, with paging parameters (and more query) validated first. */
  async #pageOp<T>(
    operation: string,
    path: Validated<string>,
    item: Decoder<T>,
    paging: Paging | undefined,
    opts: CallOptions,
    query: (p: Required<Paging>) => Validated<Query> = (p) => {
      const e = checkPaging(p);
      return e ? { ok: false, error: e } : valid(pagingQuery(p));
    },
  ): Promise<ForgeResult<Page<T>>> {
    if (!path.ok) return validationFailure(path.error);
    const p = this.#paging(paging);
    const q = query(p);
    if (!q.ok) return validationFailure(q.error);
    return this.#page({
      operation,
      method: 'GET',
      path: path.value,
      query: q.value,
      item,
      paging: p,
      signal: opts.signal,
    });
  }

  /** Walks pages of `list` from the caller's starting page and size. */
  #walk<T>(list: (paging: Paging) => Promise<ForgeResult<Page<T>>>, paging?: Paging) {
    const size = paging?.pageSize ?? this.config.defaultPageSize;
    return {
      iterate: () =>
        paginate((p) => list({ page: p.page, pageSize: p.pageSize ?? size }), { page: paging?.page ?? 1 }),
      all: () =>
        collectAll((p) => list({ page: p.page, pageSize: p.pageSize ?? size }), { page: paging?.page ?? 1 }),
    };
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
      const page = await this.#pageOp(
        'pulls.list',
        sub(repoPath(repo), '/pulls'),
        decodePullRequest,
        paging,
        opts,
        (p) => encodePullRequestQuery(query, p),
      );
      const head = query.head;
      if (!page.ok || head === undefined) return page;
      return {
        ...page,
        value: { ...page.value, items: page.value.items.filter((pr) => headMatches(pr, head)) },
      };
    },

    /** Every page of pull requests, as an async iterator of page results. */
    iterate: (repo: RepoRef, query: PullRequestQuery = {}, paging?: Paging, opts: CallOptions = {}) =>
      this.#walk((p) => this.pulls.list(repo, query, p, opts), paging).iterate(),

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
      const r = await this.#walk((p) => this.pulls.list(repo, query, p, opts), paging).all();
      if (!r.ok) return r;
      const seen = new Set<number>();
      return { ...r, value: r.value.filter((pr) => !seen.has(pr.id) && Boolean(seen.add(pr.id))) };
    },

    get: (
      repo: RepoRef,
      number: PullRequestNumber,
      opts: CallOptions = {},
    ): Promise<ForgeResult<PullRequest>> =>
      this.#op('pulls.get', 'GET', pullPath(repo, number), json(decodePullRequest), { opts }),

    create: (
      repo: RepoRef,
      input: CreatePullRequest,
      opts: CallOptions = {},
    ): Promise<ForgeResult<PullRequest>> =>
      this.#op('pulls.create', 'POST', sub(repoPath(repo), '/pulls'), json(decodePullRequest), {
        body: encodeCreatePullRequest(input),
        opts,
      }),

    /** PATCH; an empty edit changes nothing. Gitea answers 201. */
    edit: (
      repo: RepoRef,
      number: PullRequestNumber,
      input: EditPullRequest,
      opts: CallOptions = {},
    ): Promise<ForgeResult<PullRequest>> =>
      this.#op('pulls.edit', 'PATCH', pullPath(repo, number), json(decodePullRequest), {
        body: encodeEditPullRequest(input),
        opts,
      }),

    /** One page of changed files (no diff text). */
    files: (
      repo: RepoRef,
      number: PullRequestNumber,
      paging?: Paging,
      opts: CallOptions = {},
    ): Promise<ForgeResult<Page<ChangedFile>>> =>
      this.#pageOp('pulls.files', sub(pullPath(repo, number), '/files'), decodeChangedFile, paging, opts),

    /** Every changed file, all pages read. */
    allFiles: (repo: RepoRef, number: PullRequestNumber, paging?: Paging, opts: CallOptions = {}) =>
      this.#walk((p) => this.pulls.files(repo, number, p, opts), paging).all(),

    /**
     * The diff or patch document, bounded by `maxResponseBodyBytes` like every textual response
     * (with `includeBinary` it can be far larger: raise the bound for such calls' client).
     */
    diff: (
      repo: RepoRef,
      number: PullRequestNumber,
      input: DiffRequest,
      opts: CallOptions = {},
    ): Promise<ForgeResult<string>> => {
      const d = encodeDiffRequest(input);
      if (!d.ok) return Promise.resolve(validationFailure(d.error));
      return this.#op('pulls.diff', 'GET', sub(pullPath(repo, number), `.${d.value.suffix}`), text, {
        query: d.value.query,
        document: true,
        opts,
      });
    },

    /** Merges. Never retried by the library; pass `headCommit` to make a repeat after a timeout safe. */
    merge: async (
      repo: RepoRef,
      number: PullRequestNumber,
      input: MergePullRequest,
      opts: CallOptions = {},
    ): Promise<ForgeResult<MergeOutcome>> => {
      const r = await this.#op('pulls.merge', 'POST', sub(pullPath(repo, number), '/merge'), nothing, {
        body: encodeMergePullRequest(input),
        opts,
      });
      if (!r.ok) return r;
      return {
        ok: true,
        value: r.context.status === 201 ? { kind: 'scheduled' } : { kind: 'merged' },
        context: r.context,
      };
    },

    /** Brings the head branch up to date with the base, by a merge commit or by a rebase. */
    update: (
      repo: RepoRef,
      number: PullRequestNumber,
      style: UpdateStyle,
      opts: CallOptions = {},
    ): Promise<ForgeResult<void>> => {
      if (!isCase(UPDATE_STYLE_WIRE, style)) {
        return Promise.resolve(validationFailure({ field: 'style', message: 'must be merge or rebase' }));
      }
      return this.#op('pulls.update', 'POST', sub(pullPath(repo, number), '/update'), nothing, {
        query: [['style', UPDATE_STYLE_WIRE[style]]],
        opts,
      });
    },
  };

  /** Review operations. */
  readonly reviews = {
    /** One page of reviews, review requests included (state RequestReview): filter before counting approvals. */
    list: (
      repo: RepoRef,
      number: PullRequestNumber,
      paging?: Paging,
      opts: CallOptions = {},
    ): Promise<ForgeResult<Page<Review>>> =>
      this.#pageOp('reviews.list', sub(pullPath(repo, number), '/reviews'), decodeReview, paging, opts),

    listAll: (repo: RepoRef, number: PullRequestNumber, paging?: Paging, opts: CallOptions = {}) =>
      this.#walk((p) => this.reviews.list(repo, number, p, opts), paging).all(),

    get: (repo: RepoRef, number: PullRequestNumber, id: ReviewId, opts: CallOptions = {}) =>
      this.#op('reviews.get', 'GET', reviewPath(repo, number, id), json(decodeReview), { opts }),

    create: (
      repo: RepoRef,
      number: PullRequestNumber,
      input: CreateReview = {},
      opts: CallOptions = {},
    ): Promise<ForgeResult<Review>> =>
      this.#op('reviews.create', 'POST', sub(pullPath(repo, number), '/reviews'), json(decodeReview), {
        body: encodeCreateReview(input),
        opts,
      }),

    submit: (
      repo: RepoRef,
      number: PullRequestNumber,
      id: ReviewId,
      input: SubmitReview,
      opts: CallOptions = {},
    ) =>
      this.#op('reviews.submit', 'POST', reviewPath(repo, number, id), json(decodeReview), {
        body: encodeSubmitReview(input),
        opts,
      }),

    dismiss: (
      repo: RepoRef,
      number: PullRequestNumber,
      id: ReviewId,
      input: DismissReview = {},
      opts: CallOptions = {},
    ) =>
      this.#op(
        'reviews.dismiss',
        'POST',
        sub(reviewPath(repo, number, id), '/dismissals'),
        json(decodeReview),
        {
          body: encodeDismissReview(input),
          opts,
        },
      ),

    undismiss: (repo: RepoRef, number: PullRequestNumber, id: ReviewId, opts: CallOptions = {}) =>
      this.#op(
        'reviews.undismiss',
        'POST',
        sub(reviewPath(repo, number, id), '/undismissals'),
        json(decodeReview),
        {
          opts,
        },
      ),

    /** Irreversible. */
    delete: (
      repo: RepoRef,
      number: PullRequestNumber,
      id: ReviewId,
      opts: CallOptions = {},
    ): Promise<ForgeResult<void>> =>
      this.#op('reviews.delete', 'DELETE', reviewPath(repo, number, id), nothing, { opts }),

    listComments: (
      repo: RepoRef,
      number: PullRequestNumber,
      id: ReviewId,
      opts: CallOptions = {},
    ): Promise<ForgeResult<ReviewComment[]>> =>
      this.#op(
        'reviews.comments.list',
        'GET',
        sub(reviewPath(repo, number, id), '/comments'),
        json(listOrNull(decodeReviewComment)),
        {
          opts,
        },
      ),

    /** Adds a remark to a review (Forgejo; Gitea 1.26 routes only GET there and answers 405). */
    createComment: (
      repo: RepoRef,
      number: PullRequestNumber,
      id: ReviewId,
      input: NewReviewComment,
      opts: CallOptions = {},
    ): Promise<ForgeResult<ReviewComment>> =>
      this.#op(
        'reviews.comments.create',
        'POST',
        sub(reviewPath(repo, number, id), '/comments'),
        json(decodeReviewComment),
        {
          body: validateNewReviewComment(input),
          opts,
        },
      ),

    /** One remark of a review (Forgejo; Gitea 1.26 answers 404). */
    getComment: (
      repo: RepoRef,
      number: PullRequestNumber,
      id: ReviewId,
      comment: ReviewCommentId,
      opts: CallOptions = {},
    ): Promise<ForgeResult<ReviewComment>> => {
      const ce = checkPositiveId('commentId', comment);
      const path = ce
        ? ({ ok: false, error: ce } as const)
        : sub(reviewPath(repo, number, id), `/comments/${comment}`);
      return this.#op('reviews.comments.get', 'GET', path, json(decodeReviewComment), { opts });
    },

    /** Asks accounts (or teams) for a review; answers the request-review rows created. */
    requestReviewers: (
      repo: RepoRef,
      number: PullRequestNumber,
      input: ReviewRequest,
      opts: CallOptions = {},
    ): Promise<ForgeResult<Review[]>> =>
      this.#op(
        'reviews.requestReviewers',
        'POST',
        sub(pullPath(repo, number), '/requested_reviewers'),
        (t) => (t.trim() === '' ? { ok: true, value: [] } : decodeJsonText(listOrNull(decodeReview), t)),
        { body: encodeReviewRequest(input), opts },
      ),

    removeReviewRequests: (
      repo: RepoRef,
      number: PullRequestNumber,
      input: ReviewRequest,
      opts: CallOptions = {},
    ): Promise<ForgeResult<void>> =>
      this.#op(
        'reviews.removeReviewRequests',
        'DELETE',
        sub(pullPath(repo, number), '/requested_reviewers'),
        nothing,
        {
          body: encodeReviewRequest(input),
          opts,
        },
      ),
  };

  /** `GET /version`: an opaque string, compared for equality only. */
  version(opts: CallOptions = {}): Promise<ForgeResult<ServerVersion>> {
    return this.#op('misc.version', 'GET', valid('/version'), json(decodeServerVersion), { opts });
  }

  /**
   * An arbitrary call below the base URI, with the same auth, bounds, retry policy and failure
   * values as the typed operations. A non-2xx status is an `api` failure.
   */
  async request(req: RawRequest): Promise<ForgeResult<RawResponse>> {
    const refused = validationFailure({
      field: 'path',
      message: 'must start with "/" and stay below the base uri, with no query or fragment',
    });
    if (typeof req.path !== 'string' || !req.path.startsWith('/') || /[?#]/.test(req.path)) return refused;
    // Judge the URL as it will be sent: the URL parser resolves `..`, `%2e%2e` and `\` segments.
    const basePath = new URL(this.config.baseUri).pathname;
    if (!this.#wire.url({ path: req.path }).pathname.startsWith(`${basePath}/`)) return refused;
    const body = req.body !== undefined ? jsonBody(req.body) : undefined;
    if (body && !body.ok) return validationFailure(body.error);
    const out = await this.#send({
      operation: req.operation ?? 'raw',
      method: req.method,
      path: req.path,
      ...(req.query ? { query: req.query } : {}),
      ...(body?.ok ? { body: body.value } : {}),
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

/** A request body as JSON text; a value JSON cannot represent (BigInt, a cycle) is refused. */
function jsonBody(value: unknown): Validated<string> {
  const text = serialiseJson(value);
  return text === undefined
    ? { ok: false, error: { field: 'body', message: 'is not serialisable as json' } }
    : valid(text);
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function repoPath(r: RepoRef): Validated<string> {
  const owner = parseOwner(r?.owner);
  if (!owner.ok) return owner;
  const name = parseRepoName(r?.repo);
  if (!name.ok) return name;
  return valid(`/repos/${enc(owner.value)}/${enc(name.value)}`);
}

function pullPath(r: RepoRef, n: PullRequestNumber): Validated<string> {
  const e = checkPositiveId('number', n);
  return e ? { ok: false, error: e } : sub(repoPath(r), `/pulls/${n}`);
}

function reviewPath(r: RepoRef, n: PullRequestNumber, id: ReviewId): Validated<string> {
  const e = checkPositiveId('reviewId', id);
  return e ? { ok: false, error: e } : sub(pullPath(r, n), `/reviews/${id}`);
}

/** A validated path with a suffix; a failure passes through. */
function sub(path: Validated<string>, suffix: string): Validated<string> {
  return path.ok ? valid(path.value + suffix) : path;
}

const json =
  <T>(decoder: Decoder<T>) =>
  (t: string) =>
    decodeJsonText(decoder, t);
const text = (t: string) => ({ ok: true as const, value: t });
const nothing = () => ({ ok: true as const, value: undefined });

/**
 * Whether a pull request's head is `head`: for a same-repository head, a branch of the base
 * repository; for a fork head, that branch of a repository owned by that owner. Matches on the
 * head's validated parts; the wire string is never parsed.
 */
export function headMatches(pr: PullRequest, head: PullRequestHead): boolean {
  const parts = headParts(head);
  if (parts === undefined) return false;
  if (pr.head.label !== parts.branch && pr.head.ref !== parts.branch) return false;
  if (parts.owner === undefined) return pr.head.repositoryId === pr.base.repositoryId;
  return pr.head.repository?.owner?.login.toLowerCase() === parts.owner.toLowerCase();
}

export type { CallContext };
