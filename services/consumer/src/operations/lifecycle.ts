/**
 * Lifecycle commands of the admin listener and what each does to the stream:
 *
 * | command | from | effect | outcome |
 * |---|---|---|---|
 * | start | stopped, failed | joins the group and consumes (a failed stream gets a fresh restart budget) | success; skipped when already running/paused |
 * | stop | running, paused | drains the in-flight batch, commits, leaves the group | success; skipped when stopped |
 * | pause | running | stops fetching, stays in the group | success; skipped otherwise |
 * | resume | paused | fetches again | success; skipped otherwise |
 * | restart | any | stop (if needed) then start | success |
 * | clear-checkpoints | stopped, failed | resets the group's broker offsets to the earliest retained records, then deletes the group's rows of `events.consumer_checkpoint`, so the next start re-reads the retained topic (harmless: inserts deduplicate) | success; failure (400 FAILED_PRECONDITION) while consuming, or while another member is in the group (nothing deleted) |
 *
 * Each command is counted in `consume_lifecycle_commands_total{command,outcome}` and reports
 * `consume_running` at once.
 */
import type { GroupAdmin } from '@event-observatory/broker';
import { ApiError } from '@event-observatory/service-kit';
import { deleteCheckpoints, type Queryable } from '@event-observatory/store';
import type { CommandOutcome, ConsumerMetrics, LifecycleCommand } from '../metrics.js';
import type { ConsumerStream, StreamStatus } from '../stream/stream.js';
import type { Probe } from './probe.js';

export interface LifecycleOptions {
  stream: ConsumerStream;
  probe: Probe;
  metrics: ConsumerMetrics;
  pool: Queryable;
  admin: GroupAdmin;
  groupId: string;
  topic: string;
}

export class Lifecycle {
  /**
   * Serialises the commands: clear-checkpoints checks the state, then resets offsets and deletes
   * rows; a start arriving in between would join the group with offsets being reset under it.
   * (The stream serialises its own transitions too; this queue covers the command as a whole.)
   */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: LifecycleOptions) {}

  status(): StreamStatus {
    return this.opts.stream.status();
  }

  run(command: LifecycleCommand): Promise<{ outcome: CommandOutcome; status: StreamStatus }> {
    const next = this.queue.then(
      () => this.execute(command),
      () => this.execute(command),
    );
    this.queue = next.catch(() => {});
    return next;
  }

  private async execute(
    command: LifecycleCommand,
  ): Promise<{ outcome: CommandOutcome; status: StreamStatus }> {
    const { stream, metrics, probe } = this.opts;
    let outcome: CommandOutcome;
    try {
      switch (command) {
        case 'start':
          outcome = await stream.start();
          break;
        case 'stop':
          outcome = await stream.stop();
          break;
        case 'pause':
          outcome = await stream.pause();
          break;
        case 'resume':
          outcome = await stream.resume();
          break;
        case 'restart':
          outcome = await stream.restart();
          break;
        case 'clear-checkpoints':
          outcome = await this.clearCheckpoints();
          break;
      }
    } catch (err) {
      metrics.lifecycle(command, 'failure');
      probe.reportRunning();
      throw err;
    }
    metrics.lifecycle(command, outcome);
    probe.reportRunning();
    return { outcome, status: stream.status() };
  }

  private async clearCheckpoints(): Promise<CommandOutcome> {
    const { stream, pool, admin, groupId, topic } = this.opts;
    if (stream.state !== 'stopped' && stream.state !== 'failed') {
      throw new ApiError(
        'FailedPrecondition',
        `clear-checkpoints needs a stopped consumer (state: ${stream.state})`,
        {
          reason: 'consumer-running',
          metadata: { state: stream.state },
        },
      );
    }
    // The broker's offsets first: it refuses while any member is in the group (another replica, a
    // consumer of the group left running elsewhere), and then no checkpoint has been deleted.
    try {
      await admin.resetToEarliest(groupId, topic);
    } catch (err) {
      if (!/must have no running instances/.test((err as Error).message)) throw err;
      throw new ApiError(
        'FailedPrecondition',
        `clear-checkpoints needs an empty consumer group; ${groupId} still has members: stop the other replicas, or wait out the session timeout of a member that crashed`,
        { reason: 'group-active', metadata: { groupId } },
      );
    }
    await deleteCheckpoints(pool, groupId, topic);
    return 'success';
  }
}
