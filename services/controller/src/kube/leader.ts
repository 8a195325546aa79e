/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it:
 * the holder renews every `retryPeriodMs`; the others read the Lease as often and take it once it
 * has not changed for `leaseDurationMs` of their own clock (so clock skew between nodes does not
 * matter); a write that lost a race answers 409 and is simply tried again. A leader that has not
 * renewed for `renewDeadlineMs` stops leading before anyone else can take over. On shutdown the
 * leader releases the Lease so that another replica takes it at once.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@event-observatory/service-kit/logger';
import { withTimeout } from '@event-observatory/service-kit/resilience';
import type { V1Lease, V1LeaseSpec } from '@kubernetes/client-node';
import { type KubeApi, statusCode } from './api.js';

export interface LeaderElectionOptions {
  api: KubeApi;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Give the Lease up on shutdown (controller-runtime's LeaderElectionReleaseOnCancel); default true. */
  releaseOnShutdown?: boolean;
  log: Logger;
  /** Told each time the role changes, and after each attempt whether the API server answered. */
  onRole?: (leader: boolean) => void;
  onAttempt?: (answered: boolean) => void;
}

/** The last version of the Lease seen, and when (our clock). */
interface Observed {
  record: string;
  at: number;
}

/**
 * Whether a Lease held by someone else may be taken: it has no holder, or its record (holder and
 * renew time) has not changed for the lease duration since we first saw it.
 */
export function mayTake(
  lease: V1Lease,
  identity: string,
  observed: Observed,
  now: number,
  durationMs: number,
) {
  const holder = lease.spec?.holderIdentity;
  if (!holder || holder === identity) return true;
  return now - observed.at >= durationMs;
}

/**
 * A Lease time as the API server parses it (RFC 3339 with exactly 6 fraction digits). client-node
 * would send a Date with 3 (toISOString), which the server refuses; a string passes through.
 */
export function microTime(date: Date): Date {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z') as unknown as Date;
}

/** The Lease spec we write: every field explicit, times as micro-times. */
function leaseSpec(fields: {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: Date;
  renewTime: Date;
  leaseTransitions: number;
}): V1LeaseSpec {
  return { ...fields, acquireTime: microTime(fields.acquireTime), renewTime: microTime(fields.renewTime) };
}

function recordOf(lease: V1Lease): string {
  return `${lease.spec?.holderIdentity ?? ''}|${lease.spec?.renewTime ? new Date(lease.spec.renewTime).toISOString() : ''}`;
}

export class LeaderElector {
  private observed: Observed = { record: '', at: 0 };

  constructor(private readonly opts: LeaderElectionOptions) {}

  /**
   * Campaigns until `signal` aborts; while leader, runs `lead` with a signal that aborts when
   * leadership is lost or on shutdown (then the Lease is released).
   */
  async run(signal: AbortSignal, lead: (signal: AbortSignal) => Promise<void>): Promise<void> {
    while (!signal.aborted) {
      if (!(await this.attempt())) {
        await sleep(this.opts.retryPeriodMs, undefined, { signal }).catch(() => {});
        continue;
      }
      this.opts.log.info({ identity: this.opts.identity, lease: this.opts.name }, 'became leader');
      this.opts.onRole?.(true);
      const leading = new AbortController();
      const stop = () => leading.abort();
      signal.addEventListener('abort', stop, { once: true });
      const work = lead(leading.signal).catch((error: Error) => {
        this.opts.log.warn({ err: error.message }, 'leader work failed; stepping down');
      });
      await this.renewUntilLost(leading.signal);
      leading.abort();
      signal.removeEventListener('abort', stop);
      await work;
      this.opts.onRole?.(false);
      if (signal.aborted && (this.opts.releaseOnShutdown ?? true)) await this.release();
      else this.opts.log.warn({ identity: this.opts.identity }, 'lost leadership');
    }
  }

  /** Renews every retry period; returns when `signal` aborts or a renewal was missed too long. */
  private async renewUntilLost(signal: AbortSignal): Promise<void> {
    let renewed = Date.now();
    while (!signal.aborted) {
      await sleep(this.opts.retryPeriodMs, undefined, { signal }).catch(() => {});
      if (signal.aborted) return;
      const budget = Math.max(1, renewed + this.opts.renewDeadlineMs - Date.now());
      const ok = await withTimeout(this.attempt(), budget, 'lease renewal').catch(() => false);
      if (ok) renewed = Date.now();
      else if (Date.now() - renewed >= this.opts.renewDeadlineMs) return;
    }
  }

  /** One read and, when allowed, one write of the Lease; true when we hold it afterwards. */
  private async attempt(): Promise<boolean> {
    const { api, namespace, name, identity } = this.opts;
    try {
      const lease = await api.readLease(namespace, name);
      const now = Date.now();
      const leaseDurationSeconds = Math.ceil(this.opts.leaseDurationMs / 1000);
      if (!lease) {
        await api.createLease(namespace, {
          metadata: { name, namespace },
          spec: leaseSpec({
            holderIdentity: identity,
            leaseDurationSeconds,
            acquireTime: new Date(now),
            renewTime: new Date(now),
            leaseTransitions: 0,
          }),
        });
        this.opts.onAttempt?.(true);
        return true;
      }
      const record = recordOf(lease);
      if (record !== this.observed.record) this.observed = { record, at: now };
      this.opts.onAttempt?.(true);
      if (!mayTake(lease, identity, this.observed, now, this.opts.leaseDurationMs)) return false;
      const taking = lease.spec?.holderIdentity !== identity;
      const transitions = lease.spec?.leaseTransitions ?? 0;
      await api.replaceLease(namespace, {
        ...lease,
        spec: leaseSpec({
          holderIdentity: identity,
          leaseDurationSeconds,
          renewTime: new Date(now),
          acquireTime: taking || !lease.spec?.acquireTime ? new Date(now) : new Date(lease.spec.acquireTime),
          leaseTransitions: taking ? transitions + 1 : transitions,
        }),
      });
      return true;
    } catch (error) {
      const code = statusCode(error);
      if (code !== 409) {
        this.opts.onAttempt?.(false);
        this.opts.log.warn({ err: (error as Error).message, code }, 'lease request failed');
      }
      return false;
    }
  }

  /** Gives the Lease up (holder empty) so a standby takes it at its next attempt. */
  private async release(): Promise<void> {
    const { api, namespace, name, identity } = this.opts;
    try {
      const lease = await api.readLease(namespace, name);
      if (lease?.spec?.holderIdentity !== identity) return;
      const now = new Date();
      await api.replaceLease(namespace, {
        ...lease,
        spec: leaseSpec({
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: lease.spec?.acquireTime ? new Date(lease.spec.acquireTime) : now,
          renewTime: now,
          leaseTransitions: lease.spec?.leaseTransitions ?? 0,
        }),
      });
      this.opts.log.info({ identity }, 'released the lease');
    } catch (error) {
      this.opts.log.warn({ err: (error as Error).message }, 'releasing the lease failed');
    }
  }
}
