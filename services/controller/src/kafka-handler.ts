/**
 * The controller's side of Kafka: one admin client per Kafka cluster (a Pipeline may name its
 * own), and the broker package's calls on it. No topic logic here: `ensureTopics` plans with the
 * topic model and applies the plan; `readTopicStates` reads what the status reports.
 */

import {
  type BrokerSecurity,
  brokerFailureReason,
  createAdminClient,
  deleteTopics,
  ensureTopics,
  PLAINTEXT,
  readTopicStates,
  type TopicOutcome,
  type TopicSpec,
  type TopicState,
} from '@event-observatory/broker';
import type { Logger } from '@event-observatory/service-kit/logger';

type Admin = ReturnType<typeof createAdminClient>;

export interface KafkaHandlerOptions {
  clientId: string;
  requestTimeoutMs: number;
  /** TLS and SASL of every cluster's admin client (the controller's `BROKER_*` settings). */
  security?: BrokerSecurity;
  logger?: Logger;
}

export interface ApplyResult {
  outcomes: TopicOutcome[];
  /** State after the changes, of the managed and the merely read topics that exist. */
  states: Map<string, TopicState>;
}

export class KafkaHandler {
  private readonly admins = new Map<string, Promise<Admin>>();

  constructor(private readonly opts: KafkaHandlerOptions) {}

  /**
   * Makes `specs` true in the cluster at `servers`, then reads them and the `readOnly` topics
   * (unmanaged ones, reported but never changed), with the values of the configs `keys`.
   */
  async apply(
    servers: string[],
    specs: TopicSpec[],
    readOnly: string[],
    keys: string[],
  ): Promise<ApplyResult> {
    return this.using(servers, async (admin) => {
      const { topics: outcomes } =
        specs.length > 0
          ? await ensureTopics(admin, specs, { leaderTimeoutMs: this.opts.requestTimeoutMs })
          : { topics: [] };
      const states = await readTopicStates(admin, [...specs.map((s) => s.name), ...readOnly], keys);
      return { outcomes, states };
    });
  }

  /** Deletes those of `names` that exist; returns the names deleted. */
  delete(servers: string[], names: string[]): Promise<string[]> {
    return this.using(servers, (admin) => deleteTopics(admin, names, this.opts.requestTimeoutMs));
  }

  async close(): Promise<void> {
    const admins = [...this.admins.values()];
    this.admins.clear();
    await Promise.all(admins.map((a) => a.then((admin) => admin.disconnect()).catch(() => {})));
  }

  /**
   * Runs `work` on the cluster's admin client; a failure drops the client so the next call
   * reconnects, and is rethrown with its reason explained (`brokerFailureReason`: a wrong
   * password or an untrusted certificate reads as such in the Pipeline's status and events).
   */
  private async using<T>(servers: string[], work: (admin: Admin) => Promise<T>): Promise<T> {
    const key = [...servers].sort().join(',');
    let admin = this.admins.get(key);
    if (!admin) {
      const client = createAdminClient({ ...this.opts, bootstrapServers: servers });
      admin = client.connect().then(() => client);
      this.admins.set(key, admin);
    }
    try {
      return await work(await admin);
    } catch (error) {
      this.admins.delete(key);
      void admin.then((a) => a.disconnect()).catch(() => {});
      throw new Error(brokerFailureReason(error, this.opts.security ?? PLAINTEXT), { cause: error });
    }
  }
}
