/**
 * What exports may hold: at most `perViewer` open at once per viewer and `perPod` in all (one more
 * answers 429 `export-limit`), each slot given back when its client leaves; and an export whose
 * client stops reading is cut at its age limit (its connection ended, its slot given back, one
 * warning logged). The exports here are larger than the sockets between the service and the test
 * hold, so one that is not read waits on its client.
 */
import type { ErrorResponseBody } from '@event-observatory/service-kit/errors';
import type { Logger } from '@event-observatory/service-kit/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';
import { asViewer, headerViewer } from './test-viewer.js';

const warnings: string[] = [];
const logger: Logger = {
  debug() {},
  info() {},
  warn: (_o, msg) => void warnings.push(msg ?? ''),
  error() {},
};

let capped: Harness;
let shortLived: Harness;

/** About 24 MB of NDJSON: rows with long subjects, which the devstack seed does not make. */
async function plantLargeRows(h: Harness): Promise<void> {
  // sql-witness: writes rows with long subjects, which the devstack seed does not make.
  await h.db.query(
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, ce_subject, raw)
     SELECT t, 'urn:test:export-limits', 'e-' || g, 'com.example.export', subj,
            jsonb_build_object('specversion', '1.0', 'id', 'e-' || g, 'source', 'urn:test:export-limits',
              'type', 'com.example.export', 'subject', subj)
       FROM (SELECT g, now() - g * interval '1 second' AS t, repeat(md5(g::text), 120) AS subj
               FROM generate_series(1, 6000) AS g) AS s`,
  );
}

beforeAll(async () => {
  [capped, shortLived] = await Promise.all([
    startHarness('export_caps', {
      authenticate: headerViewer,
      exportLimits: { perViewer: 2, perPod: 3, maxAgeMs: 600_000 },
    }),
    startHarness('export_age', {
      authenticate: headerViewer,
      logger,
      exportLimits: { perViewer: 1, perPod: 1, maxAgeMs: 1_500 },
    }),
  ]);
  await Promise.all([plantLargeRows(capped), plantLargeRows(shortLived)]);
});

afterAll(async () => {
  await Promise.all([capped?.close(), shortLived?.close()]);
});

const EXPORT = '/events.ndjson?range=all';

describe('exports open at once', () => {
  it('are capped per viewer and per pod, and a slot comes back when its client leaves', async () => {
    const leaving = new AbortController();
    const open = async (h: Harness, viewer: string) => {
      const res = await h.get(EXPORT, asViewer(viewer), leaving.signal);
      return res.status;
    };
    const refusal = async (viewer: string) => {
      const res = await capped.get(EXPORT, asViewer(viewer));
      return {
        status: res.status,
        reason: ((await res.json()) as ErrorResponseBody).error.details[0]?.reason,
      };
    };
    try {
      expect(await open(capped, 'ann')).toBe(200);
      expect(await open(capped, 'ann')).toBe(200);
      expect(await refusal('ann')).toEqual({ status: 429, reason: 'export-limit' });
      expect(await open(capped, 'bob')).toBe(200);
      expect(await refusal('cy')).toEqual({ status: 429, reason: 'export-limit' });
    } finally {
      leaving.abort();
    }
    // The three clients left: their exports end and give their slots back.
    await expect
      .poll(async () => {
        const res = await capped.get(EXPORT, asViewer('ann'));
        await res.body?.cancel();
        return res.status;
      })
      .toBe(200);
  });
});

describe('an export whose client stops reading', () => {
  it('is cut at its age limit, and its slot comes back', async () => {
    const res = await shortLived.get(EXPORT, asViewer('ann'));
    expect(res.status).toBe(200);
    // Not read while the age limit passes, then read to its end: the service ended it early.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const body = await res.text().catch(() => '');
    expect(body).not.toContain('"export":{"complete":true');
    expect(warnings).toContain('export cut: still running at its age limit');
    // The next one small: the whole 24 MB may outlast the short age limit on a loaded machine.
    const next = await shortLived.get(`${EXPORT}&id=e-1&id=e-2&id=e-3`, asViewer('ann'));
    expect(next.status).toBe(200);
    expect(await next.text()).toContain('"export":{"complete":true,"rows":3}');
  });
});
