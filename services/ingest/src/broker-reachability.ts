/**
 * The only state of the service: whether the broker is reachable, as far as it last heard
 * (Document 1 section 3); the readiness check's `broker` field.
 * It starts "not ready"; one probe at boot, every produce outcome and the periodic probe move it.
 * One piece of evidence flips it: a success makes it ready, a failure makes it not ready.
 */
export class BrokerReachability {
  private reachable = false;

  /** Records one piece of evidence (a produce outcome or a probe result). */
  observe(reachable: boolean): void {
    this.reachable = reachable;
  }

  get isReachable(): boolean {
    return this.reachable;
  }
}
