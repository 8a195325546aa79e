/**
 * `database.bundled`: a PostgreSQL for evaluation and CI, configured through the official postgres
 * image's variables. On its first start it creates the database and the owner (`database.user`, its
 * password from the store Secret); at every start the writer and reader login roles, made when
 * missing and their passwords set (`database.writer.user` / `database.reader.user`, by default
 * observatory_writer and observatory_reader, their passwords generated in the store Secret):
 * packages/store DESIGN, the migration then grants them their rights.
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import type { Construct } from 'constructs';
import {
  DATABASE_BUNDLED,
  POSTGRES_CLIENTS,
  POSTGRES_CLIENTS_WHEN,
  POSTGRES_EXPORTER_ON,
  POSTGRES_PORT,
  roleUser,
  secretName,
} from '../bundled.js';
import { databasePassword } from '../credentials.js';
import { onlyIf, releaseName, scalar, value } from '../helm.js';
import { BundledStateful } from './bundled-stateful.js';
import { metadata } from './common.js';

/**
 * Run at every start of the server (postStart), so a volume made by an older release, or kept by
 * helm uninstall, gets the roles this release names, with the passwords of their Secrets (a role
 * the migration made without one, bundled.ts' waitForDatabase, gets it here). psql variables
 * quote the names.
 */
const ROLES_SCRIPT = `# The writer and reader login roles (packages/store DESIGN.md) and postgres_exporter's.
ensure_role() {
  [ -n "$1" ] || return 0
  psql -v ON_ERROR_STOP=1 --quiet --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \\
    --set=name="$1" --set=password="$2" <<'SQL'
SELECT format(CASE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = :'name')
  THEN 'ALTER ROLE %I LOGIN PASSWORD %L' ELSE 'CREATE ROLE %I LOGIN PASSWORD %L' END, :'name', :'password') \\gexec
SQL
}
ensure_role "\${WRITER_USER:-}" "\${WRITER_PASSWORD:-}"
ensure_role "\${READER_USER:-}" "\${READER_PASSWORD:-}"
# postgres_exporter's role (monitoring.postgresExporter): pg_monitor and nothing else.
ensure_role "\${MONITOR_USER:-}" "\${MONITOR_PASSWORD:-}"
if [ -n "\${MONITOR_USER:-}" ]; then
  psql -v ON_ERROR_STOP=1 --quiet --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" --set=name="$MONITOR_USER" <<'SQL'
GRANT pg_monitor TO :"name";
SQL
fi
# The search's text, payload and tag operators keep their GIN indexes under row-level security
# (packages/store DESIGN.md, "Row visibility"): a superuser marks their functions leakproof. Only
# a slower search without it, so a refusal does not stop the server.
psql -v ON_ERROR_STOP=1 --quiet --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<'SQL' ||
ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;
ALTER FUNCTION pg_catalog.jsonb_contains(jsonb, jsonb) LEAKPROOF;
ALTER FUNCTION pg_catalog.arraycontains(anyarray, anyarray) LEAKPROOF;
SQL
  echo "roles.sh: the search operators stay not leakproof (their filters read without their indexes)" >&2
`;

const SCRIPT_DIR = '/etc/observatory/postgresql';

/** A role's password variable, from the Secret the chart's pods of that role read. */
function rolePassword(role: 'owner' | 'writer' | 'reader', name: string): k8s.EnvVar {
  return { ...databasePassword(role), name };
}

export class BundledPostgresql {
  constructor(scope: Construct) {
    const roles = new k8s.KubeConfigMap(scope, 'postgresql-configmap', {
      metadata: metadata('postgresql'),
      data: { 'roles.sh': ROLES_SCRIPT },
    });
    onlyIf(roles, DATABASE_BUNDLED);
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
      clients: POSTGRES_CLIENTS,
      // The controller with its read-only URL for status.flow.lastStoredAt, when given.
      clientsWhen: POSTGRES_CLIENTS_WHEN,
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
        { name: 'WRITER_USER', value: scalar(`{{ ${roleUser('writer')} | toJson }}`) },
        rolePassword('writer', 'WRITER_PASSWORD'),
        { name: 'READER_USER', value: scalar(`{{ ${roleUser('reader')} | toJson }}`) },
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
      volumes: [{ name: 'roles', configMap: { name: releaseName('postgresql') } }],
      volumeMounts: [{ name: 'roles', mountPath: SCRIPT_DIR, readOnly: true }],
      // Once the server listens on TCP (after initdb's socket-only first run), as its own user over
      // the socket; the container is Ready only after this.
      postStart: [
        'sh',
        '-c',
        `until pg_isready --quiet --host 127.0.0.1 --port ${POSTGRES_PORT} --username "$POSTGRES_USER"; do sleep 1; done; exec sh ${SCRIPT_DIR}/roles.sh`,
      ],
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
