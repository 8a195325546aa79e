/**
 * `kafka.bundled`: a single-node KRaft Kafka (broker and controller in one process) for evaluation
 * and CI, configured through the official apache/kafka image's `KAFKA_*` variables. No automatic
 * topic creation: the controller creates the Pipeline's topics, as with an external Kafka.
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import type { Construct } from 'constructs';
import { KAFKA_BUNDLED, KAFKA_PORT } from '../bundled.js';
import { text, value } from '../helm.js';
import { BundledStateful } from './bundled-stateful.js';

const CONTROLLER_PORT = 9093;

export class BundledKafka {
  constructor(scope: Construct) {
    const settings: Record<string, string> = {
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: `PLAINTEXT://:${KAFKA_PORT},CONTROLLER://:${CONTROLLER_PORT}`,
      // Clients reach the one broker through its Service, by the name they bootstrapped with.
      KAFKA_ADVERTISED_LISTENERS: text(
        `PLAINTEXT://{{ .Release.Name }}-kafka.{{ .Release.Namespace }}.svc:${KAFKA_PORT}`,
      ),
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      KAFKA_CONTROLLER_QUORUM_VOTERS: `1@localhost:${CONTROLLER_PORT}`,
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
      KAFKA_LOG_DIRS: '/var/lib/kafka/data/logs',
      KAFKA_HEAP_OPTS: value('kafka.bundled.heapOpts'),
    };
    const tcp = { tcpSocket: { port: k8s.IntOrString.fromString('kafka') } };
    new BundledStateful(scope, {
      component: 'kafka',
      valuesKey: 'kafka.bundled',
      condition: KAFKA_BUNDLED,
      // The migration and the jobs use only PostgreSQL; search neither.
      clients: ['ingest', 'consumer', 'controller'],
      uid: 1000,
      port: KAFKA_PORT,
      dataPath: '/var/lib/kafka/data',
      // The image writes its server.properties at start; the JVM wants a /tmp.
      scratch: ['/opt/kafka/config', '/tmp'],
      env: Object.entries(settings).map(([name, v]) => ({ name, value: v })),
      readinessProbe: { ...tcp, periodSeconds: 5, failureThreshold: 3 },
      livenessProbe: { ...tcp, initialDelaySeconds: 60, periodSeconds: 10, failureThreshold: 6 },
      // A controlled shutdown of one broker: it moves no leadership, so it is quick.
      terminationGracePeriodSeconds: 60,
    });
  }
}
