/**
 * The schema migration: a Job run as a Helm pre-install and pre-upgrade hook, so the schema is
 * current before any new pod starts, once per install or upgrade (the consumer's own boot-time
 * migration is switched off). Helm waits for it and stops the release when it fails. It runs
 * `observatory-migrate` of the store package, which the jobs image carries. A hook runs before
 * the release's ConfigMaps exist, so its settings are given directly; the hook Job is deleted
 * when it succeeds (and before the next one), so an uninstall leaves none behind.
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { migrationHook, roleUser, waitForDatabase } from '../bundled.js';
import { credentialVolumes, databasePassword, databaseSettings } from '../credentials.js';
import { blocks, scalar, value } from '../helm.js';
import { extraEnvItems, image, labels, metadata, podBlocks, podDefaults, tmpMount } from './common.js';

export class Migration extends Construct {
  constructor(scope: Construct) {
    super(scope, 'migration-component');
    const { serviceAccountName: _, ...pod } = podDefaults('jobs');
    const job = new k8s.KubeJob(this, 'migration-job', {
      metadata: metadata('migration', 'migrate', {
        // The bundled PostgreSQL is created with the release, after pre-install hooks (bundled.ts).
        'helm.sh/hook': migrationHook(),
        'helm.sh/hook-weight': '0',
        'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
      }),
      spec: {
        backoffLimit: 1,
        activeDeadlineSeconds: value<number>('migration.activeDeadlineSeconds'),
        template: {
          metadata: { labels: labels('migration') },
          spec: {
            ...pod,
            restartPolicy: 'Never',
            containers: [
              {
                name: 'migrate',
                ...image('jobs'),
                command: ['node', 'packages/store/dist/migrate-cli.js'],
                // A failure's last log lines become the pod's termination message, which
                // `kubectl describe` and the Job's pod status show (README: Troubleshooting).
                terminationMessagePolicy: 'FallbackToLogsOnError',
                env: [
                  ...Object.entries({
                    ...databaseSettings('owner'),
                    // The migrations grant to these roles (unset: a one-role install, no grants).
                    DATABASE_WRITER_ROLE: scalar(`{{ ${roleUser('writer')} | toJson }}`),
                    DATABASE_READER_ROLE: scalar(`{{ ${roleUser('reader')} | toJson }}`),
                  }).map(([name, v]) => ({ name, value: v })),
                  databasePassword('owner'),
                ],
                volumeMounts: [tmpMount],
              },
            ],
          },
        },
      },
    });
    podBlocks(job, '/spec/template/spec', 'jobs.resources');
    blocks(job, { '/spec/template/spec/initContainers': waitForDatabase() });
    credentialVolumes(job, '/spec/template/spec', { database: 'owner' }, 'jobs');
    extraEnvItems(job, '/spec/template/spec', 'jobs');
  }
}
