/**
 * The only state of the service: whether the broker is reachable, as far as it last heard
 * (readiness, README "Endpoints"); the readiness check's `broker` field, and `brokerReason` beside it.
 * It starts "not ready"; one probe at boot, every produce outcome and the periodic probe move it.
 * One piece of evidence flips it: a success makes it ready, a failure makes it not ready.
 *
 * Each reason is logged once while the broker stays unreachable (a wrong password fails every
 * request and every probe the same way), and the recovery once.
 */
import type { Logger } from '@event-observatory/service-kit/logger';

/** Distinct reasons logged in one outage at most; a broker failing in ever new words is not logged further. */
const MAX_REASONS_LOGGED = 16;

export class BrokerReachability {
  private reachable = false;
  private lastReason: string | undefined = 'no probe yet';
  private readonly logged = new Set<string>();

  constructor(private readonly logger?: Logger) {}

  /** Records one piece of evidence (a produce outcome or a probe result) and, on failure, why. */
  observe(reachable: boolean, reason = 'unreachable'): void {
    if (reachable) {
      if (!this.reachable && this.logged.size > 0) this.logger?.info({}, 'broker reachable again');
      this.logged.clear();
      this.lastReason = undefined;
    } else {
      if (!this.logged.has(reason) && this.logged.size < MAX_REASONS_LOGGED) {
        this.logged.add(reason);
        this.logger?.warn({ reason }, 'broker unreachable');
      }
      this.lastReason = reason;
    }
    this.reachable = reachable;
  }

  get isReachable(): boolean {
    return this.reachable;
  }

  /** Why the broker is not reachable (the last failure's reason); undefined while reachable. */
  get reason(): string | undefined {
    return this.reachable ? undefined : this.lastReason;
  }
}
