/**
 * TCP reachability as a pod sees it, under the cluster's NetworkPolicies (kube-router's firewall):
 * a client pod with given labels opens connections to targets and reports each one's steady state.
 */
import { expect } from 'vitest';
import type { TestNamespace } from './kube.js';

export type Outcome = 'open' | 'blocked' | 'flapping';
/** Label of the probe pods that wait for the enforcer (`settle`): a policy denying them the canary selects them. */
export const SETTLE = { 'observatory.test/settle': 'true' };
/** How long a settling probe waits for the enforcer to program its pod. */
export const SETTLE_MS = 60_000;

/** How a probe reads a target's steady state (probe). */
const STEADY_MS = 16_000;
const STEADY_TRIES = 3;
const STEADY_MAX_MS = 45_000;

/**
 * Runs a client pod (`image`: one with node, e.g. ingest's) that opens TCP connections to each
 * target (name -> host:port) and reports the steady state, `open` or `blocked` (or `flapping` when
 * its last tries never agreed): what the last tries agree on after 16 s, never one early answer.
 * While the enforcer learns a new pod or a changed policy (kube-router's ipsets took more than 6 s
 * on a busy node, and longer with three suites at once) a refusal may not be in force yet and an
 * admission may not be either; both settle. With `settle` (host:port of a canary that a policy
 * denies to pods labelled SETTLE, as network-policies.test.ts's applySettlePolicy does), the pod
 * first waits up to SETTLE_MS until the canary refuses it, and fails if it never does: only then
 * are the targets tried, so an `open` is never the moment before the enforcer applies a refusal
 * either.
 */
export async function probe(
  image: string,
  where: TestNamespace,
  name: string,
  labels: Record<string, string>,
  targets: Record<string, string>,
  settle?: string,
): Promise<Record<string, Outcome>> {
  const script = `
    const net = require('node:net');
    const once = (host, port) => new Promise((done) => {
      const s = net.connect({ host, port, timeout: 2000 });
      s.on('connect', () => { s.destroy(); done(true); });
      s.on('timeout', () => { s.destroy(); done(false); });
      s.on('error', () => done(false));
    });
    const pause = () => new Promise((r) => setTimeout(r, 500));
    const settled = async (address) => {
      if (!address) return true;
      const [host, port] = address.split(':');
      const deadline = Date.now() + ${SETTLE_MS};
      do {
        if (!(await once(host, Number(port)))) return true;
        await pause();
      } while (Date.now() < deadline);
      return false;
    };
    const targets = JSON.parse(process.env.TARGETS);
    // The steady state: tries go on for ${STEADY_MS / 1000} s at least, then until the last
    // ${STEADY_TRIES} agree (${STEADY_MAX_MS / 1000} s at most), and that is the outcome.
    const steady = async (host, port) => {
      const start = Date.now();
      const seen = [];
      for (;;) {
        seen.push(await once(host, port));
        const last = seen.slice(-${STEADY_TRIES});
        const agreed = last.length === ${STEADY_TRIES} && last.every((x) => x === last[0]);
        const elapsed = Date.now() - start;
        if ((agreed && elapsed >= ${STEADY_MS}) || elapsed >= ${STEADY_MAX_MS}) return agreed ? (last[0] ? 'open' : 'blocked') : 'flapping';
        await pause();
      }
    };
    settled(process.env.SETTLE).then((ok) => ok ? Promise.all(Object.entries(targets).map(async ([name, address]) => {
      const [host, port] = address.split(':');
      return [name, await steady(host, Number(port))];
    })).then((r) => console.log(JSON.stringify(Object.fromEntries(r)))) : console.log('unsettled'));`;
  const { phase, logs } = await where.runPod(
    name,
    {
      image,
      command: ['node', '-e', script],
      env: { TARGETS: JSON.stringify(targets), SETTLE: settle ?? '' },
      labels: settle ? { ...labels, ...SETTLE } : labels,
    },
    settle ? 90_000 + SETTLE_MS : undefined,
  );
  expect(phase, logs).toBe('Succeeded');
  const last = logs.trim().split('\n').at(-1) ?? '{}';
  if (last === 'unsettled') {
    throw new Error(
      `${name}: the canary ${settle} still answered after ${SETTLE_MS / 1000} s: the NetworkPolicy enforcer never programmed this pod`,
    );
  }
  return JSON.parse(last) as Record<string, Outcome>;
}
