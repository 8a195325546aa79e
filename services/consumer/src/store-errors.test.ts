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

  it('treats connection loss, shutdown and resource errors as transient', () => {
    for (const code of ['08006', '57P01', '57P03', '53300', '40001', 'ECONNREFUSED', 'ECONNRESET']) {
      expect(classifyStoreError({ code, message: 'x' }).kind).toBe('transient');
    }
    expect(classifyStoreError(new Error('timeout exceeded when trying to connect')).kind).toBe('transient');
  });
});
