/**
 * @event-observatory/forge-client — typed client for the pull-request API of Gitea and Forgejo.
 *
 * @example
 * import { ForgeClient, tokenAuth, describeFailure } from '@event-observatory/forge-client';
 * const client = ForgeClient.create({
 *   baseUri: 'https://gitea.example.org/api/v1',
 *   userAgent: 'release-bot/1.0',
 *   auth: tokenAuth(process.env.GITEA_TOKEN ?? ''),
 * });
 * const open = await client.pulls.list({ owner: 'acme', repo: 'web' });
 * if (open.ok) for (const pr of open.value.items) console.log(pr.number, pr.title);
 * else console.error(describeFailure(open.failure));
 */

export {
  type CallOptions,
  ForgeClient,
  ForgeConfigError,
  headMatches,
  type MergeOutcome,
  type RawRequest,
  type RawResponse,
  type RepoRef,
} from './client.js';
export {
  type Auth,
  basicAuth,
  DEFAULT_RETRY_POLICY,
  DEFAULTS,
  ForgeConfig,
  type ForgeConfigInput,
  normaliseBaseUri,
  PUBLIC_BASE_URI,
  type RetryPolicy,
  Secret,
  tokenAuth,
} from './config.js';
export {
  CommitFileStatus,
  DiffFormat,
  MergeStyle,
  PullRequestSort,
  ReviewState,
  type StateFilter,
  UpdateStyle,
} from './enums.js';
export * from './ids.js';
export { formatJsonPath, type JsonPath, type JsonPathSegment, jsonPath, jsonPathEquals } from './json.js';
export type {
  ChangedFile,
  Label,
  MergeEvidence,
  Milestone,
  PullRequest,
  PullRequestBranch,
  PullRequestState,
  Repository,
  Review,
  ReviewComment,
  ServerVersion,
  User,
} from './models.js';
export { sameServerVersion } from './models.js';
export { collectAll, type Page, paginate, parseLinkHeader } from './paging.js';
export {
  type CreatePullRequest,
  type CreateReview,
  type DiffRequest,
  type DismissReview,
  type EditPullRequest,
  forkHead,
  type MergePullRequest,
  type NewReviewComment,
  type Paging,
  type PullRequestHead,
  type PullRequestQuery,
  type ReviewRequest,
  type SubmitReview,
  sameRepoHead,
} from './requests.js';
export {
  type ApiErrorBody,
  type ApiFailure,
  type ApiFieldError,
  type CallContext,
  type DecodeFailure,
  decodeApiErrorBody,
  describeFailure,
  type ForgeFailure,
  type ForgeResult,
  type TransportCause,
  type TransportFailure,
  type ValidationFailure,
} from './result.js';
export { redactUri } from './transport.js';
export {
  type BranchName,
  type Login,
  type Owner,
  parseBranchName,
  parseLogin,
  parseOwner,
  parseRepoName,
  type RepoName,
  type Validated,
  type ValidationError,
} from './validation.js';
