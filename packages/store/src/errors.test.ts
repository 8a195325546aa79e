import { describe, expect, it } from 'vitest';
import {
  classifyStoreError,
  describeStoreFailure,
  isAcquireTimeout,
  isConnectionFailure,
  isReadOnly,
  isStatementTimeout,
  mustDiscard,
  sqlstateOf,
} from './errors.js';

/** drizzle's wrapping of a driver error: its own message, the driver's error as `cause`. */
const wrapped = (code: string) =>
  Object.assign(new Error('Failed query: ...'), { cause: { code, message: 'x' } });

describe('classifyStoreError', () => {
  it('treats data exceptions and integrity violations as the record fault', () => {
    expect(classifyStoreError({ code: '22P05', message: 'unsupported Unicode escape' }).kind).toBe(
      'deterministic',
    );
    expect(classifyStoreError({ code: '23514', message: 'violates check constraint' }).kind).toBe(
      'deterministic',
    );
    expect(classifyStoreError({ code: '22007', message: 'invalid datetime' }).kind).toBe('deterministic');
  });

  it('treats program limits (index row or tsvector too large) as the record fault', () => {
    const f = classifyStoreError({ code: '54000', message: 'index row size 6128 exceeds btree maximum' });
    expect(f).toMatchObject({ kind: 'deterministic', code: '54000' });
    expect(classifyStoreError({ code: '54000', message: 'string is too long for tsvector' }).kind).toBe(
      'deterministic',
    );
  });

  it('treats connection loss, shutdown, resources, read-only and timeouts as transient', () => {
    for (const code of ['08006', '57P01', '57P03', '53300', '53100', '40001', '25006', '57014']) {
      expect(classifyStoreError({ code, message: 'x' }).kind).toBe('transient');
    }
    for (const code of ['ECONNREFUSED', 'ECONNRESET']) {
      expect(classifyStoreError({ code, message: 'x' })).toMatchObject({ kind: 'transient', code });
    }
    expect(classifyStoreError(new Error('timeout exceeded when trying to connect')).kind).toBe('transient');
    expect(classifyStoreError(new Error('Query read timeout'))).toMatchObject({
      kind: 'transient',
      code: undefined,
    });
  });

  it('reads the SQLSTATE of a wrapped driver error from its cause', () => {
    expect(classifyStoreError(wrapped('23505'))).toMatchObject({ kind: 'deterministic', code: '23505' });
    expect(sqlstateOf(wrapped('25006'))).toBe('25006');
    expect(sqlstateOf({ code: 'ECONNRESET' })).toBeUndefined();
  });

  it('describes a failure by SQLSTATE and message', () => {
    expect(describeStoreFailure(classifyStoreError({ code: '25006', message: 'read-only' }))).toBe(
      'SQLSTATE 25006: read-only',
    );
    expect(describeStoreFailure(classifyStoreError(new Error('gone')))).toBe('gone');
  });
});

describe('connection fate', () => {
  it('counts class 08, 57P, socket errors and an answerless failure as a broken connection', () => {
    for (const err of [
      { code: '08006' },
      { code: '57P01' },
      { code: 'ECONNRESET' },
      new Error('Query read timeout'),
    ]) {
      expect(isConnectionFailure(err)).toBe(true);
      expect(mustDiscard(err)).toBe(true);
    }
    expect(isConnectionFailure({ code: '23505' })).toBe(false);
    expect(isConnectionFailure({ code: '57014' })).toBe(false);
  });

  it('discards a connection that answered read-only, and keeps one that answered a row fault', () => {
    expect(isReadOnly({ code: '25006' })).toBe(true);
    expect(isReadOnly(wrapped('25006'))).toBe(true);
    expect(mustDiscard({ code: '25006' })).toBe(true);
    expect(mustDiscard({ code: '22P02' })).toBe(false);
  });
});

describe('timeouts', () => {
  it('tells a statement cancelled by its timeout from a connection not handed out in time', () => {
    expect(isStatementTimeout({ code: '57014' })).toBe(true);
    expect(isStatementTimeout(wrapped('57014'))).toBe(true);
    expect(isStatementTimeout({ code: '57P01' })).toBe(false);
    expect(isAcquireTimeout(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isAcquireTimeout(new Error('Connection terminated due to connection timeout'))).toBe(true);
    expect(isAcquireTimeout(new Error('Connection terminated unexpectedly'))).toBe(false);
  });
});
