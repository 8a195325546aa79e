/**
 * Replay positions: per reason and dead-letter partition, the offset before which every dead
 * letter of that reason is replayed (or superseded by a later record of its key). A scan starts
 * at the lowest position of the reasons it looks for and hides a letter below its reason's
 * position, so a replay of more letters than one scan reads makes progress and never re-publishes
 * a letter it already replayed, even when that letter's tombstone lies beyond the scan's bound.
 * Per reason, so a filtered replay moves past letters of other reasons without skipping them.
 *
 * Pure; `admin.ts` keeps the positions where the consumer keeps its own offsets: rows of
 * `events.consumer_checkpoint`, one group per reason (`replayGroup`), topic the dead-letter topic.
 *
 * @example
 * const positions: Positions = new Map([['malformed', new Map([[0, 10n]])]]);
 * scanStart(positions, ['malformed']); // Map { 0 => 10n }
 * advance(positions, ['malformed'], new Map([[0, 40n]]), [{ partition: 0, offset: '25', reason: 'malformed' }]);
 * // Map { 'malformed' => Map { 0 => 25n } }: letter 25 was not replayed, so the position stops there
 */
import type { PoisonReason } from '../write/decode.js';

/** Positions per reason, each per partition; a partition absent from a reason's map is at 0. */
export type Positions = Map<PoisonReason, Map<number, bigint>>;

/** A live letter a run left in place (not replayed: past the limit, failed, or after a failure). */
export interface PendingLetter {
  partition: number;
  offset: string;
  reason: PoisonReason;
}

/** The checkpoint group whose rows hold `reason`'s replay positions. */
export function replayGroup(groupId: string, reason: PoisonReason): string {
  return `${groupId}.dlq-replayed.${reason}`;
}

/** Where a scan for `reasons` starts per partition: the lowest position among them (absent: the start). */
export function scanStart(positions: Positions, reasons: readonly PoisonReason[]): Map<number, bigint> {
  const partitions = new Set([...positions.values()].flatMap((byPartition) => [...byPartition.keys()]));
  const start = new Map<number, bigint>();
  for (const partition of partitions) {
    let lowest: bigint | undefined;
    for (const reason of reasons) {
      const at = positions.get(reason)?.get(partition) ?? 0n;
      if (lowest === undefined || at < lowest) lowest = at;
    }
    if (lowest) start.set(partition, lowest); // 0n: from the start
  }
  return start;
}

/** Whether a letter lies below its reason's position: replayed already. */
export function isReplayed(
  positions: Positions,
  reason: PoisonReason,
  partition: number,
  offset: string,
): boolean {
  return BigInt(offset) < (positions.get(reason)?.get(partition) ?? 0n);
}

/**
 * The positions that move after a run over `reasons`: in each partition read up to `readTo` (the
 * next offset after the last record handled), a reason's position moves to its first pending
 * letter there, or to `readTo` when none is pending. Only positions that move are returned.
 */
export function advance(
  positions: Positions,
  reasons: readonly PoisonReason[],
  readTo: ReadonlyMap<number, bigint>,
  pending: readonly PendingLetter[],
): Positions {
  const moved: Positions = new Map();
  for (const reason of reasons) {
    for (const [partition, end] of readTo) {
      let to = end;
      for (const p of pending) {
        if (p.reason === reason && p.partition === partition && BigInt(p.offset) < to) to = BigInt(p.offset);
      }
      if (to > (positions.get(reason)?.get(partition) ?? 0n)) {
        if (!moved.has(reason)) moved.set(reason, new Map());
        moved.get(reason)!.set(partition, to);
      }
    }
  }
  return moved;
}
