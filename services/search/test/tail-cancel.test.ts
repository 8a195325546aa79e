/**
 * A live tail's statements end with the tail: a client that leaves while one waits on the store
 * has it cancelled on the server at once, not left running to its statement timeout.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Harness, readerStatements, startHarness, withTableLocked } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('tail_cancel', { seed: 100 });
});

afterAll(async () => {
  await h?.close();
});

it('cancels the statement of a tail whose client leaves', async () => {
  await withTableLocked(h, async () => {
    const client = new AbortController();
    const res = await h.get('/events/tail?range=all', {}, client.signal);
    expect(res.status).toBe(200);
    await expect.poll(() => readerStatements(h), { timeout: 5_000 }).toBeGreaterThan(0);
    client.abort();
    // Well inside the read pool's 2 s statement timeout, which would end it anyway.
    await expect.poll(() => readerStatements(h), { timeout: 1_000, interval: 50 }).toBe(0);
  });
});
