/**
 * The controller's side of Kafka: one admin client per Kafka cluster and credentials (a Pipeline
 * may name its own), and the broker package's calls on it. No topic logic here: `ensureTopics`
 * plans with the topic model and applies the plan; `readTopicStates` reads what the status reports.
 * Missing topics are created here first, by a create-only call, so a topic someone else creates
 * between the read and the create is never changed by `ensureTopics`' re-plan unless the
 * Pipeline may take it over.
 */
import { createHash } from 'node:crypto';

import {
  type BrokerSecurity,
  brokerFailureReason,
  createAdminClient,
  deleteTopics,
  ensureTopics,
  isVanishedTopic,
  PLAINTEXT,
  readGroupReadings,
  readTopicStates,
  type TopicOutcome,
  type TopicSpec,
  type TopicState,
  validateSpecs,
} from '@event-observatory/broker';
import type { Logger } from '@event-observatory/service-kit/logger';

type Admin = ReturnType<typeof createAdminClient>;

export interface KafkaHandlerOptions {
  clientId: string;
  requestTimeoutMs: number;
  /** The controller's own `BROKER_*` security: for Pipelines whose `spec.kafka` sets none. */
  security?: BrokerSecurity;
  logger?: Logger;
}

/** A cluster and how to reach it: its servers and the Pipeline's security (undefined: the controller's own). */
export interface KafkaTarget {
  servers: string[];
  security?: BrokerSecurity | undefined;
}

export interface ApplyResult {
  outcomes: TopicOutcome[];
  /** State after the changes, of the managed and the merely read topics that exist. */
  states: Map<string, TopicState>;
  /** Topics of `specs` that existed and `mayTakeOver` refused: left as they were. */
  notAdopted: string[];
}

/** How `apply` may treat existing topics, and how it records the topics it creates. */
export interface Adoption {
  /** Whether a spec whose topic exists may be applied to it (take-over rules). */
  mayTakeOver: (name: string) => boolean;
  /** Records `names` as about to be created; nothing is created unless it succeeds. */
  creating: (names: string[]) => Promise<void>;
  /**
   * Told, when `apply` fails after `creating`, which of those topics do not exist (never created):
   * their record must not claim them. Topics it could not check are not named.
   */
  notCreated?: (names: string[]) => void;
}

/** The CreateTopics entry of a spec (as `ensureTopics` makes it). */
function topicConfig(spec: TopicSpec) {
  return {
    topic: spec.name,
    numPartitions: spec.partitions,
    replicationFactor: spec.replicationFactor,
    configEntries: Object.entries(spec.configs).map(([name, value]) => ({ name, value })),
  };
}

/** A failure of the caller's own work inside a Kafka call (the record write): not Kafka's. */
class NotKafkaFailure extends Error {
  constructor(readonly failure: unknown) {
    super('not a Kafka failure');
  }
}

export class KafkaHandler {
  private readonly admins = new Map<string, Promise<Admin>>();

  constructor(private readonly opts: KafkaHandlerOptions) {}

  /**
   * Makes `specs` true in the cluster, then reads them and the `readOnly` topics (unmanaged ones,
   * reported but never changed), with the values of the configs `keys`. A spec whose topic exists
   * already is applied only when `adoption.mayTakeOver(name)`, and so is one whose topic appeared
   * between the read and its creation (created by someone else: refused otherwise, in
   * `notAdopted`). `adoption.creating(names)` records which topics are about to be created, and
   * nothing is created unless it succeeds; after a failure, `adoption.notCreated` is told which of
   * them do not exist.
   */
  async apply(
    target: KafkaTarget,
    specs: TopicSpec[],
    readOnly: string[],
    keys: string[],
    adoption: Adoption,
  ): Promise<ApplyResult> {
    validateSpecs(specs);
    return this.using(target, async (admin) => {
      const existing = await readTopicStates(
        admin,
        specs.map((s) => s.name),
        [],
      );
      const notAdopted = specs
        .filter((s) => existing.has(s.name) && !adoption.mayTakeOver(s.name))
        .map((s) => s.name);
      let applied = specs.filter((s) => !notAdopted.includes(s.name));
      const missing = applied.filter((s) => !existing.has(s.name));
      if (missing.length > 0)
        await adoption.creating(missing.map((s) => s.name)).catch((error: unknown) => {
          throw new NotKafkaFailure(error);
        });
      const created = new Set<string>();
      try {
        // One request per topic: kafkajs answers `false` for a whole request when any topic existed.
        // Every answer is awaited: a topic made beside one that failed is this Pipeline's, whatever
        // a listing read just after the failure shows (a loaded broker may not list it yet).
        const made = await Promise.allSettled(
          missing.map((spec) => admin.createTopics({ topics: [topicConfig(spec)], waitForLeaders: false })),
        );
        missing.forEach((spec, i) => {
          const answer = made[i];
          if (answer?.status === 'fulfilled' && answer.value) created.add(spec.name);
        });
        const failed = made.find((answer) => answer.status === 'rejected');
        if (failed) throw failed.reason;
        // Appeared since the read: someone else's, unless the take-over rules let this Pipeline have it.
        const appeared = missing.filter((s) => !created.has(s.name) && !adoption.mayTakeOver(s.name));
        notAdopted.push(...appeared.map((s) => s.name));
        applied = applied.filter((s) => !appeared.includes(s));
        const { topics } =
          applied.length > 0
            ? await ensureTopics(admin, applied, { leaderTimeoutMs: this.opts.requestTimeoutMs })
            : { topics: [] };
        // Created above: `ensureTopics` found them as specified, and reports them unchanged.
        const outcomes = topics.map((outcome): TopicOutcome => {
          if (!created.has(outcome.name)) return outcome;
          const { partitionsBefore: _, ...rest } = outcome;
          return { ...rest, action: 'created' };
        });
        const states = await readTopicStates(admin, [...specs.map((s) => s.name), ...readOnly], keys);
        return { outcomes, states, notAdopted };
      } catch (error) {
        if (missing.length > 0 && adoption.notCreated) {
          const present = await admin.listTopics().then(
            (names) => new Set(names),
            () => undefined, // cannot tell: the records stay, as after a crash
          );
          if (present)
            adoption.notCreated(
              missing.map((s) => s.name).filter((name) => !created.has(name) && !present.has(name)),
            );
        }
        throw error;
      }
    });
  }

  /** Deletes those of `names` that exist; returns the names deleted. */
  delete(target: KafkaTarget, names: string[]): Promise<string[]> {
    return this.using(target, (admin) => deleteTopics(admin, names, this.opts.requestTimeoutMs));
  }

  /** Committed offsets of `groups` on their topics and the ranges of those and `topics` (flow health). */
  readFlow(
    target: KafkaTarget,
    groups: Array<{ groupId: string; topic: string }>,
    topics: string[],
  ): ReturnType<typeof readGroupReadings> {
    return this.using(target, (admin) => readGroupReadings(admin, groups, topics));
  }

  async close(): Promise<void> {
    const admins = [...this.admins.values()];
    this.admins.clear();
    await Promise.all(admins.map((a) => a.then((admin) => admin.disconnect()).catch(() => {})));
  }

  /**
   * Runs `work` on the cluster's admin client; a failure drops the client so the next call
   * reconnects (at once, for a topic that vanished: see `attempt`), and is rethrown with its reason
   * explained (`brokerFailureReason`: a wrong password or an untrusted certificate reads as such in
   * the Pipeline's status and events).
   */
  private async using<T>(target: KafkaTarget, work: (admin: Admin) => Promise<T>): Promise<T> {
    const security = target.security ?? this.opts.security;
    // Credentials are part of the key (a rotated password gets a new client), as a digest only.
    // (Named fields: the broker's security objects print without their secrets.)
    const { protocol, sasl, tls } = security ?? {};
    const digest = createHash('sha256')
      .update(
        JSON.stringify([
          protocol,
          sasl?.mechanism,
          sasl?.username,
          sasl?.password,
          tls?.ca,
          tls?.cert,
          tls?.key,
        ]),
      )
      .digest('hex');
    const key = `${[...target.servers].sort().join(',')}|${digest}`;
    return this.attempt(key, { ...target, security }, work, true);
  }

  /**
   * One try of `work` on the cached client of `key`. A kafkajs admin refreshes the metadata of every
   * topic it has read before each create, and fails so for good once another client deletes one of
   * them (a managed topic deleted by hand): that failure drops the client and, when `retry`, runs
   * `work` again on a fresh one.
   */
  private async attempt<T>(
    key: string,
    target: KafkaTarget,
    work: (admin: Admin) => Promise<T>,
    retry: boolean,
  ): Promise<T> {
    const { security } = target;
    let admin = this.admins.get(key);
    if (!admin) {
      const client = createAdminClient({
        clientId: this.opts.clientId,
        requestTimeoutMs: this.opts.requestTimeoutMs,
        ...(this.opts.logger ? { logger: this.opts.logger } : {}),
        bootstrapServers: target.servers,
        ...(security ? { security } : {}),
      });
      admin = client.connect().then(() => client);
      this.admins.set(key, admin);
    }
    try {
      return await work(await admin);
    } catch (error) {
      // The client is fine and the error is someone else's: passed on as it is.
      if (error instanceof NotKafkaFailure) throw error.failure;
      this.admins.delete(key);
      void admin.then((a) => a.disconnect()).catch(() => {});
      if (retry && isVanishedTopic(error)) return this.attempt(key, target, work, false);
      throw new Error(brokerFailureReason(error, security ?? PLAINTEXT), { cause: error });
    }
  }
}
