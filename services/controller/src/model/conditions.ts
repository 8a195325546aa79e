/**
 * Conditions as the Kubernetes API conventions want them: one per type, `lastTransitionTime` set
 * only when `status` changes, `observedGeneration` on each.
 */
import type { Condition } from '../pipeline/types.js';

export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/**
 * `conditions` with `next` in place of the condition of its type; keeps the old
 * `lastTransitionTime` when the status is unchanged.
 *
 * @example
 * setCondition([], { type: 'Ready', status: 'True', reason: 'Reconciled', message: '', observedGeneration: 2 }, now);
 */
export function setCondition(conditions: Condition[], next: ConditionInput, now: Date): Condition[] {
  const previous = conditions.find((c) => c.type === next.type);
  const lastTransitionTime =
    previous && previous.status === next.status ? previous.lastTransitionTime : now.toISOString();
  const updated: Condition = { ...next, lastTransitionTime };
  return previous ? conditions.map((c) => (c.type === next.type ? updated : c)) : [...conditions, updated];
}

/** `conditions` without the condition of `type`. */
export function removeCondition(conditions: Condition[], type: string): Condition[] {
  return conditions.filter((c) => c.type !== type);
}

export function findCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}
