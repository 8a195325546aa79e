/**
 * A stream whose group join fails while it starts (found by the fault suite's broker kill -9: the
 * broker died between the consumer's connect and its join). kafkajs reports that failure as a
 * CRASH event *before* `consumer.run()` resolves, so the stream must not then call itself running:
 * it would report `running` (and ready) with no consumer behind it and never relaunch. Reproduced
 * on the shared broker with a member that holds the group under another assignment protocol, so
 * the stream's join is refused (INCONSISTENT_GROUP_PROTOCOL) until that member leaves.
 */
import { AssignerProtocol, type Consumer, type PartitionAssigner } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, testEvent, waitFor } from './harness.js';

let h: Harness;
let blocker: Consumer;

const otherProtocol: PartitionAssigner = () => ({
  name: 'OtherProtocol',
  version: 1,
  async assign() {
    return [];
  },
  protocol({ topics }) {
    return {
      name: 'OtherProtocol',
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }),
    };
  },
});

beforeAll(async () => {
  h = await startHarness('start-crash', { env: { CONSUMER_AUTO_START: 'false' } });
  blocker = h.kafka.consumer({ groupId: h.groupId, partitionAssigners: [otherProtocol] });
  await blocker.connect();
  await blocker.subscribe({ topics: [h.topic] });
  const joined = new Promise<void>((resolve) => blocker.on(blocker.events.GROUP_JOIN, () => resolve()));
  await blocker.run({ eachMessage: async () => {} });
  await joined;
});

afterAll(async () => {
  await blocker?.disconnect().catch(() => {});
  await h?.close();
});

describe('a group join that fails while the stream starts', () => {
  it('leaves the stream restarting, not running, and it consumes once the join can succeed', async () => {
    await h.service.stream.start();
    await waitFor('the refused join', () => h.service.stream.status().lastError !== undefined, 30_000);
    expect(h.service.stream.status().state).toBe('starting');

    await blocker.disconnect();
    await h.publish([testEvent(1), testEvent(2)]);
    await waitFor('both events stored', async () => (await h.count()) === 2, 60_000);
    expect(h.service.stream.status().state).toBe('running');
  });
});
