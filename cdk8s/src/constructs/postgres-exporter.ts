/**
 * postgres_exporter: `pg_up` for PostgresDown and the database panels. Optional
 * (`monitoring.postgresExporter.enabled`; `auto` follows `database.bundled.enabled`). It logs in
 * as a role of its own that is a member of `pg_monitor` and nothing else (monitoring/README.md
 * gives the SQL); its Service is `<release>-postgres-exporter`, the name the rules' scope expects.
 * It connects with `database.tls` as every database client does: the CA Secret mounted as a file
 * (credentials.ts), named by `sslrootcert` in its URI.
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { DATABASE_BUNDLED, POSTGRES_EXPORTER_ON, secretName } from '../bundled.js';
import { credentialVolumes } from '../credentials.js';
import { onlyIf, scalar, value } from '../helm.js';
import { image, labels, metadata, podBlocks, podDefaults, selector } from './common.js';

const COMPONENT = 'postgres-exporter';
const PORT = 9187;

export class PostgresExporter extends Construct {
  constructor(scope: Construct) {
    super(scope, COMPONENT);
    const values = '.Values.monitoring.postgresExporter';
    new k8s.KubeServiceAccount(this, `${COMPONENT}-serviceaccount`, {
      metadata: metadata(COMPONENT),
      automountServiceAccountToken: false,
    });
    const deployment = new k8s.KubeDeployment(this, `${COMPONENT}-deployment`, {
      metadata: metadata(COMPONENT),
      spec: {
        replicas: 1,
        revisionHistoryLimit: 3,
        selector: { matchLabels: selector(COMPONENT) },
        template: {
          metadata: { labels: labels(COMPONENT) },
          spec: {
            ...podDefaults(COMPONENT),
            containers: [
              {
                name: COMPONENT,
                ...image('monitoring.postgresExporter'),
                args: [`--web.listen-address=:${PORT}`, '--disable-settings-metrics'],
                // Named as every component's metrics port: the scrape policy and endpoint name it.
                ports: [{ name: 'metrics', containerPort: PORT }],
                env: [
                  // host:port/database?options of the clients' URL (database.url or the bundled
                  // PostgreSQL's, with database.tls' sslmode and sslrootcert): the exporter adds its
                  // own role. Its driver (lib/pq) asks for TLS unless told not to, and the bundled
                  // PostgreSQL serves none: sslmode=disable there. It waits for a connection as long
                  // as the kernel retries a SYN (about 2 min), holding the scrape and the readiness
                  // probe: connect_timeout bounds that to 5 s.
                  {
                    name: 'DATA_SOURCE_URI',
                    value: scalar(
                      `{{ $u := regexReplaceAll "^(jdbc:)?postgres(ql)?://([^@/]*@)?" (include "observatory.databaseUrl" .) "" }}{{ if and ${DATABASE_BUNDLED} (not (contains "sslmode=" $u)) }}{{ $u = printf "%s%ssslmode=disable" $u (ternary "&" "?" (contains "?" $u)) }}{{ end }}{{ if not (contains "connect_timeout=" $u) }}{{ $u = printf "%s%sconnect_timeout=5" $u (ternary "&" "?" (contains "?" $u)) }}{{ end }}{{ $u | toJson }}`,
                    ),
                  },
                  { name: 'DATA_SOURCE_USER', value: value('monitoring.postgresExporter.user') },
                  {
                    name: 'DATA_SOURCE_PASS',
                    valueFrom: {
                      secretKeyRef: {
                        name: scalar(
                          `{{ ${values}.passwordSecret.name | default ${secretName('store')} | toJson }}`,
                        ),
                        key: value('monitoring.postgresExporter.passwordSecret.key'),
                      },
                    },
                  },
                ],
                readinessProbe: {
                  httpGet: { path: '/metrics', port: k8s.IntOrString.fromString('metrics') },
                  periodSeconds: 10,
                  timeoutSeconds: 5,
                },
              },
            ],
          },
        },
      },
    });
    podBlocks(deployment, '/spec/template/spec', 'monitoring.postgresExporter.resources');
    // /tmp and the CA file of database.tls.caSecret, as every database client mounts them.
    credentialVolumes(deployment, '/spec/template/spec', { database: 'owner' }, undefined);
    new k8s.KubeService(this, `${COMPONENT}-service`, {
      metadata: metadata(COMPONENT),
      spec: {
        selector: selector(COMPONENT),
        ports: [{ name: 'metrics', port: PORT, targetPort: k8s.IntOrString.fromString('metrics') }],
      },
    });
    onlyIf(this, POSTGRES_EXPORTER_ON);
  }
}
