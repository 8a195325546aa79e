import { describe, expect, it } from 'vitest';
import { classifyStoreError } from './store-errors.js';

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

  it('treats connection loss, shutdown and resource errors as transient', () => {
    for (const code of ['08006', '57P01', '57P03', '53300', '40001', 'ECONNREFUSED', 'ECONNRESET']) {
      expect(classifyStoreError({ code, message: 'x' }).kind).toBe('transient');
    }
    expect(classifyStoreError(new Error('timeout exceeded when trying to connect')).kind).toBe('transient');
  });
});
