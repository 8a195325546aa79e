/**
 * `database.bundled`: a PostgreSQL for evaluation and CI, configured through the official postgres
 * image's variables. On its first start it creates the database, the owner (`database.user`, its
 * password from the store Secret) and, when `database.writer.user` / `database.reader.user` are
 * set, those login roles (packages/store DESIGN: the migration then grants them their rights).
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import type { Construct } from 'constructs';
import { DATABASE_BUNDLED, POSTGRES_EXPORTER_ON, POSTGRES_PORT, secretName } from '../bundled.js';
import { databasePassword } from '../credentials.js';
import { onlyIf, releaseName, scalar, value } from '../helm.js';
import { BundledStateful } from './bundled-stateful.js';
import { metadata } from './common.js';

/** Sourced by the image's entrypoint after the database exists (psql variables quote the names). */
const ROLES_SCRIPT = `# The writer and reader login roles (packages/store DESIGN.md), when the chart names them.
create_role() {
  [ -n "$1" ] || return 0
  echo "postgres: creating the login role $1"
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \\
    --set=name="$1" --set=password="$2" <<'SQL'
CREATE ROLE :"name" LOGIN PASSWORD :'password';
SQL
}
create_role "\${WRITER_USER:-}" "\${WRITER_PASSWORD:-}"
create_role "\${READER_USER:-}" "\${READER_PASSWORD:-}"
# postgres_exporter's role (monitoring.postgresExporter): pg_monitor and nothing else.
create_role "\${MONITOR_USER:-}" "\${MONITOR_PASSWORD:-}"
if [ -n "\${MONITOR_USER:-}" ]; then
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" --set=name="$MONITOR_USER" <<'SQL'
GRANT pg_monitor TO :"name";
SQL
fi
`;

const INIT_DIR = '/docker-entrypoint-initdb.d';

/** A role's password variable, from the Secret the chart's pods of that role read. */
function rolePassword(role: 'owner' | 'writer' | 'reader', name: string): k8s.EnvVar {
  return { ...databasePassword(role), name };
}

export class BundledPostgresql {
  constructor(scope: Construct) {
    const init = new k8s.KubeConfigMap(scope, 'postgresql-configmap', {
      metadata: metadata('postgresql'),
      data: { 'roles.sh': ROLES_SCRIPT },
    });
    onlyIf(init, DATABASE_BUNDLED);
    const ready = {
      exec: {
        command: [
          'sh',
          '-c',
          `pg_isready --host 127.0.0.1 --port ${POSTGRES_PORT} --username "$POSTGRES_USER"`,
        ],
      },
    };
    new BundledStateful(scope, {
      component: 'postgresql',
      valuesKey: 'database.bundled',
      condition: DATABASE_BUNDLED,
      uid: 999,
      port: POSTGRES_PORT,
      dataPath: '/var/lib/postgresql/data',
      scratch: ['/var/run/postgresql', '/tmp'],
      env: [
        // A folder below the mount point: initdb wants an empty one (a volume may hold lost+found).
        { name: 'PGDATA', value: '/var/lib/postgresql/data/pgdata' },
        {
          name: 'POSTGRES_USER',
          value: scalar('{{ .Values.database.user | default "observatory" | toJson }}'),
        },
        { name: 'POSTGRES_DB', value: value('database.bundled.database') },
        rolePassword('owner', 'POSTGRES_PASSWORD'),
        { name: 'WRITER_USER', value: value('database.writer.user') },
        rolePassword('writer', 'WRITER_PASSWORD'),
        { name: 'READER_USER', value: value('database.reader.user') },
        rolePassword('reader', 'READER_PASSWORD'),
        {
          name: 'MONITOR_USER',
          value: scalar(
            `{{ ternary .Values.monitoring.postgresExporter.user "" ${POSTGRES_EXPORTER_ON} | toJson }}`,
          ),
        },
        {
          name: 'MONITOR_PASSWORD',
          valueFrom: {
            secretKeyRef: {
              name: scalar(
                `{{ .Values.monitoring.postgresExporter.passwordSecret.name | default ${secretName('store')} | toJson }}`,
              ),
              key: value('monitoring.postgresExporter.passwordSecret.key'),
              // Absent while the exporter is off (the generated Secret has the key only then).
              optional: true,
            },
          },
        },
      ],
      volumes: [{ name: 'init', configMap: { name: releaseName('postgresql') } }],
      volumeMounts: [{ name: 'init', mountPath: INIT_DIR, readOnly: true }],
      readinessProbe: { ...ready, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 3 },
      livenessProbe: {
        ...ready,
        initialDelaySeconds: 30,
        periodSeconds: 10,
        timeoutSeconds: 5,
        failureThreshold: 6,
      },
      terminationGracePeriodSeconds: 30,
    });
  }
}
