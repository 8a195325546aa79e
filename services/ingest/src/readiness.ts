/**
 * The only state of the service: its belief about broker reachability (Document 1 section 3).
 * It starts "not ready"; one probe at boot, every produce outcome and the periodic probe move it.
 * One piece of evidence flips it: a success makes it ready, a failure makes it not ready.
 */
export class BrokerBelief {
  private reachable = false;

  /** Records one piece of evidence (a produce outcome or a probe result). */
  observe(reachable: boolean): void {
    this.reachable = reachable;
  }

  get isReachable(): boolean {
    return this.reachable;
  }
}
