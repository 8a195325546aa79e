import { describe, expect, it } from 'vitest';
import { ForgeClient, ForgeConfigError, headMatches } from './client.js';
import type { PullRequest } from './models.js';
import { forkHead, sameRepoHead } from './requests.js';
import { type BranchName, type Owner, parseBranchName, parseOwner } from './validation.js';

const b = (s: string) => (parseBranchName(s) as { value: BranchName }).value;
const o = (s: string) => (parseOwner(s) as { value: Owner }).value;

function pr(head: { label: string; repoId: number; owner?: string }): PullRequest {
  return {
    base: { label: 'main', ref: b('main'), repositoryId: 1, sha: '' },
    head: {
      label: head.label,
      ref: b(head.label),
      repositoryId: head.repoId,
      sha: '',
      ...(head.owner
        ? { repository: { id: head.repoId, name: 'r', fullName: '', owner: { login: head.owner } } }
        : {}),
    },
  } as unknown as PullRequest;
}

describe('head filter', () => {
  it('matches a bare branch only within the base repository', () => {
    expect(headMatches(pr({ label: 'feat', repoId: 1 }), sameRepoHead(b('feat')))).toBe(true);
    expect(headMatches(pr({ label: 'feat', repoId: 2, owner: 'alice' }), sameRepoHead(b('feat')))).toBe(
      false,
    );
    expect(headMatches(pr({ label: 'other', repoId: 1 }), sameRepoHead(b('feat')))).toBe(false);
  });

  it('matches owner:branch against the fork owner, case-insensitively', () => {
    expect(
      headMatches(pr({ label: 'feat', repoId: 2, owner: 'Alice' }), forkHead(o('alice'), b('feat'))),
    ).toBe(true);
    expect(headMatches(pr({ label: 'feat', repoId: 2, owner: 'bob' }), forkHead(o('alice'), b('feat')))).toBe(
      false,
    );
  });
});

describe('client factory', () => {
  it('fails at start-up, not on a request, for an invalid configuration', () => {
    expect(() => ForgeClient.create({ userAgent: 'ua\n', baseUri: 'http://h/api/v1' })).toThrow(
      ForgeConfigError,
    );
    expect(() => ForgeClient.create({ userAgent: 'ua', baseUri: 'http://h/' })).toThrow(
      expect.objectContaining({ error: { field: 'baseUri', message: 'must end with /api/v1' } }),
    );
  });

  it('refuses raw paths that escape the base URI or carry a query', async () => {
    const c = ForgeClient.create({ userAgent: 'ua', baseUri: 'http://127.0.0.1:9/api/v1' });
    for (const path of [
      'repos/x',
      '/a/../../admin',
      '/%2e%2e/%2e%2e/admin',
      '/a/%2E%2e/%2e%2E/x',
      '/a\\..\\..\\admin',
      '/..',
      '/a?token=x',
      '/a#f',
    ]) {
      const r = await c.request({ method: 'GET', path });
      expect(r.ok === false && r.failure.kind, path).toBe('validation');
    }
    c.close();
  });

  it('accepts raw paths that stay below the base URI, dot segments included', async () => {
    const c = ForgeClient.create({
      userAgent: 'ua',
      baseUri: 'http://127.0.0.1:9/api/v1',
      connectTimeoutMs: 0, // fails in transport at once: only the validation outcome matters here
    });
    for (const path of ['/version', '/repos/a/b/../c', '/repos/%2e%2e']) {
      const r = await c.request({ method: 'GET', path });
      expect(r.ok === false && r.failure.kind, path).toBe('transport');
    }
    c.close();
  });
});
