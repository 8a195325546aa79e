/**
 * `kafka.bundled`: a single-node KRaft Kafka (broker and controller in one process) for evaluation
 * and CI, configured through the official apache/kafka image's `KAFKA_*` variables. No automatic
 * topic creation: the controller creates the Pipeline's topics, as with an external Kafka.
 *
 * Its clients' listener takes SCRAM-SHA-512 logins only (SASL_PLAINTEXT: no TLS inside the
 * cluster), as the user of the clients' `kafka.sasl.*` (credentials.ts). The broker's own
 * listeners, the controller's and the inter-broker one, listen on the pod's loopback alone. The
 * user's credential is set at every start (postStart, through the inter-broker listener: a
 * controller does not take that admin request), so a volume kept from an older release, or a
 * password changed in its Secret, gets it too.
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import type { Construct } from 'constructs';
import { KAFKA_BUNDLED, KAFKA_CLIENTS, KAFKA_PORT } from '../bundled.js';
import { BUNDLED_SASL_MECHANISM, KAFKA_DIR, kafkaSasl, SASL_PASSWORD_FILE } from '../credentials.js';
import { scalar, value } from '../helm.js';
import { BundledStateful } from './bundled-stateful.js';

const CONTROLLER_PORT = 9093;
const INTERNAL_PORT = 9094;

/**
 * Sets the SCRAM credential once the broker answers (kafka-configs retries until then, within its
 * minute; a few such minutes, else the container restarts). A small heap beside the broker's, logs
 * in /tmp (the root filesystem is read-only).
 */
const SCRAM_USER_SCRIPT = `i=0
until KAFKA_HEAP_OPTS=-Xmx128m LOG_DIR=/tmp /opt/kafka/bin/kafka-configs.sh --bootstrap-server localhost:${INTERNAL_PORT} \\
  --alter --entity-type users --entity-name "$SCRAM_USERNAME" \\
  --add-config "${BUNDLED_SASL_MECHANISM}=[password=$(cat ${SASL_PASSWORD_FILE})]" >/tmp/scram-user.log 2>&1; do
  i=$((i + 1)); [ "$i" -lt 5 ] || { cat /tmp/scram-user.log >&2; exit 1; }; sleep 2
done`;

export class BundledKafka {
  constructor(scope: Construct) {
    const settings: Record<string, string> = {
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: `CLIENT://:${KAFKA_PORT},INTERNAL://localhost:${INTERNAL_PORT},CONTROLLER://localhost:${CONTROLLER_PORT}`,
      // Clients reach the one broker through its Service, by the address they bootstrapped with.
      KAFKA_ADVERTISED_LISTENERS: scalar(
        `{{ printf "CLIENT://%s,INTERNAL://localhost:${INTERNAL_PORT}" (include "observatory.kafkaBootstrap" .) | toJson }}`,
      ),
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_INTER_BROKER_LISTENER_NAME: 'INTERNAL',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,CLIENT:SASL_PLAINTEXT',
      KAFKA_SASL_ENABLED_MECHANISMS: BUNDLED_SASL_MECHANISM,
      // The server side of SCRAM: the credentials are in the cluster's metadata, none in here.
      KAFKA_LISTENER_NAME_CLIENT_SCRAM___SHA___512_SASL_JAAS_CONFIG:
        'org.apache.kafka.common.security.scram.ScramLoginModule required;',
      KAFKA_CONTROLLER_QUORUM_VOTERS: `1@localhost:${CONTROLLER_PORT}`,
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
      KAFKA_LOG_DIRS: '/var/lib/kafka/data/logs',
      KAFKA_HEAP_OPTS: value('kafka.bundled.heapOpts'),
      // The log cleaner's buffer lives on the heap (128 MiB by default, a quarter of the default
      // heap, enough to keep G1 marking back to back under load); 16 MiB dedupes about 600,000
      // keys a pass, plenty for an evaluation install's compacted topics.
      KAFKA_LOG_CLEANER_DEDUPE_BUFFER_SIZE: String(16 * 1024 * 1024),
      // Not a KAFKA_* variable: no broker setting.
      SCRAM_USERNAME: scalar(`{{ ${kafkaSasl('Username')} | toJson }}`),
    };
    const tcp = { tcpSocket: { port: k8s.IntOrString.fromString('kafka') } };
    new BundledStateful(scope, {
      component: 'kafka',
      valuesKey: 'kafka.bundled',
      condition: KAFKA_BUNDLED,
      clients: KAFKA_CLIENTS,
      uid: 1000,
      port: KAFKA_PORT,
      dataPath: '/var/lib/kafka/data',
      // The image writes its server.properties at start; the JVM wants a /tmp.
      scratch: ['/opt/kafka/config', '/tmp'],
      env: Object.entries(settings).map(([name, v]) => ({ name, value: v })),
      // The password its clients log in with, the file they read it from.
      volumes: [
        {
          name: 'sasl',
          secret: {
            secretName: scalar(`{{ ${kafkaSasl('Secret')} | toJson }}`),
            defaultMode: 0o440,
            items: [{ key: value('kafka.sasl.passwordSecret.key'), path: 'sasl-password' }],
          },
        },
      ],
      volumeMounts: [{ name: 'sasl', mountPath: KAFKA_DIR, readOnly: true }],
      postStart: ['sh', '-c', SCRAM_USER_SCRIPT],
      readinessProbe: { ...tcp, periodSeconds: 5, failureThreshold: 3 },
      livenessProbe: { ...tcp, initialDelaySeconds: 60, periodSeconds: 10, failureThreshold: 6 },
      // A controlled shutdown of one broker: it moves no leadership, so it is quick.
      terminationGracePeriodSeconds: 60,
    });
  }
}
