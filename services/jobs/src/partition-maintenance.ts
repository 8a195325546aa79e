/**
 * partition-maintenance: creates the months from the current one to `monthsAhead` ahead with the
 * migration's `events.create_month_partition` (same storage and autovacuum settings), except a
 * month whose rows already sit in the default partition: that month is blocked, counted in
 * `maintenance_partitions_blocked`, and the statements that move its rows are logged for a human.
 * With `retainMonths` set it detaches (never drops) older partitions. Every creation and detach runs
 * under a savepoint with `lock_timeout` = `MAINTENANCE_DETACH_LOCK_TIMEOUT`: one that cannot get
 * its lock is undone alone, the run's outcome is failure, and what else the run did commits.
 */
import type { Logger } from '@event-observatory/service-kit';
import {
  ADVISORY_LOCKS,
  countDefaultRows,
  createMonthPartition,
  detachPartition,
  headroomMonths,
  listPartitions,
  monthPartitionName,
  moveDefaultRowsStatements,
  stepUnderLockTimeout,
} from '@event-observatory/store';
import type { JobsConfig } from './config.js';
import { planPartitions } from './partition-plan.js';
import type { JobWork } from './run-job.js';

export type PartitionMaintenanceSettings = Pick<
  JobsConfig,
  'monthsAhead' | 'retainMonths' | 'detachLockTimeoutMs'
>;

export function partitionMaintenance(settings: PartitionMaintenanceSettings, logger: Logger): JobWork {
  return {
    job: 'partition-maintenance',
    lockKey: ADVISORY_LOCKS.partitionMaintenance,
    isolation: 'READ COMMITTED',
    async run(client, now) {
      const plan = planPartitions({ now, partitions: await listPartitions(client), ...settings });
      // Counted before the first DDL: creating or detaching a month holds the event table's ACCESS
      // EXCLUSIVE lock until the run commits, and a count of a full default partition under it
      // would stall every insert and search. The DDL below changes none of these counts.
      const defaultRows = await countDefaultRows(client);
      const rowsOf = new Map<Date, number>();
      for (const month of plan.missing)
        rowsOf.set(month, defaultRows && (await countDefaultRows(client, month)));
      const failures: string[] = [];
      let created = 0;
      let blocked = 0;
      for (const month of plan.missing) {
        const rows = rowsOf.get(month) ?? 0;
        if (rows > 0) {
          blocked++;
          const statements = await moveDefaultRowsStatements(client, month);
          logger.warn(
            { partition: monthPartitionName(month), defaultRows: rows, statements },
            `month blocked: the default partition holds ${rows} rows of it; run the statements to move them into a new partition`,
          );
          continue;
        }
        const error = await stepUnderLockTimeout(client, settings.detachLockTimeoutMs, async () => {
          if (await createMonthPartition(client, month)) created++;
        });
        if (error) {
          failures.push(`create ${monthPartitionName(month)}: ${error}`);
          logger.error({ partition: monthPartitionName(month), err: error }, 'partition not created');
        }
      }
      let detached = 0;
      for (const name of plan.detach) {
        const error = await stepUnderLockTimeout(client, settings.detachLockTimeoutMs, () =>
          detachPartition(client, name),
        );
        if (error) {
          failures.push(`detach ${name}: ${error}`);
          logger.error({ partition: name, err: error }, 'detach failed; the partition stays attached');
        } else {
          detached++;
          logger.info({ partition: name }, 'partition detached (the table is kept)');
        }
      }
      const counts = {
        partitionsCreated: created,
        partitionsDetached: detached,
        partitionsBlocked: blocked,
        headroomMonths: headroomMonths(await listPartitions(client), now),
        defaultRows,
      };
      return failures.length ? { counts, failure: failures.join('; ') } : { counts };
    },
  };
}
