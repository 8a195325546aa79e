/**
 * What partition-maintenance should do at `now`, decided from the attached partitions alone: the
 * months from the current one to `monthsAhead` ahead that have no partition, and the partitions
 * that end at or before the start of the month `retainMonths` before the current one (with
 * `retainMonths` 3 in November: July and older; August, with days inside the last three months,
 * stays). Pure, so month and year boundaries are tested without a database.
 */
import { addMonths, type MonthPartition } from '@event-observatory/store';

export interface PartitionPlanInput {
  now: Date;
  partitions: readonly MonthPartition[];
  monthsAhead: number;
  retainMonths?: number | undefined;
}

export interface PartitionPlan {
  /** UTC month starts to create, oldest first. */
  missing: Date[];
  /** Names of the partitions to detach, oldest first. */
  detach: string[];
}

export function planPartitions(input: PartitionPlanInput): PartitionPlan {
  const { now, partitions } = input;
  const missing: Date[] = [];
  for (let m = 0; m <= input.monthsAhead; m++) {
    const month = addMonths(now, m);
    if (!partitions.some((p) => p.from <= month && month < p.to)) missing.push(month);
  }
  const cutoff = input.retainMonths === undefined ? undefined : addMonths(now, -input.retainMonths);
  const detach = cutoff ? partitions.filter((p) => p.to <= cutoff).map((p) => p.name) : [];
  return { missing, detach };
}
