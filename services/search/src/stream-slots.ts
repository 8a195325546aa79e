/**
 * The open streams of one kind (live tails, exports) a pod allows: at most `perPod` in all and
 * `perHolder` per holder, so that one viewer cannot take every read connection or the process's
 * memory with them.
 */
import type { Context } from 'hono';
import { peerAddress } from './auth/proxy.js';
import type { SearchEnv } from './viewer.js';

export interface StreamSlots {
  /** Takes a slot of `holder`; false, nothing taken, when either cap is reached. */
  take(holder: string): boolean;
  /** Gives back a slot `take` gave `holder`. */
  give(holder: string): void;
}

export function streamSlots(perPod: number, perHolder: number): StreamSlots {
  const held = new Map<string, number>();
  let open = 0;
  return {
    take(holder) {
      const mine = held.get(holder) ?? 0;
      if (open >= perPod || mine >= perHolder) return false;
      open++;
      held.set(holder, mine + 1);
      return true;
    },
    give(holder) {
      open--;
      const left = (held.get(holder) ?? 1) - 1;
      if (left > 0) held.set(holder, left);
      else held.delete(holder);
    },
  };
}

/** Whose streams a request's stream counts among: its viewer's, or its address's with login off. */
export function holderOf(c: Context<SearchEnv>): string {
  const viewer = c.get('viewer');
  return viewer.via === 'open' ? `address:${peerAddress(c) ?? 'in-process'}` : `viewer:${viewer.subject}`;
}
