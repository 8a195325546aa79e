/**
 * The maintenance CronJobs (services/jobs): partition-maintenance every 6 h and
 * rollup-refresh every 5 min by default. Never two runs at once (the jobs also lock in the
 * database), a deadline on each run, a short history.
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { credentialVolumes, databasePassword, databaseSettings } from '../credentials.js';
import { releaseName, scalar, spread, text, value, valueText } from '../helm.js';
import {
  extraEnvItems,
  image,
  labels,
  metadata,
  podBlocks,
  podDefaults,
  serviceAccountMetadata,
  tmpMount,
} from './common.js';

/**
 * The jobs' bound on one statement of a run (RUN_STATEMENT_TIMEOUT of services/jobs/src/run-job.ts;
 * its client waits 5 s more). A run's deadline comes after it, with a margin: a slow run then ends
 * by that timeout, rolls back and records its failure, and its advisory lock goes with its
 * transaction. Killed before, the pod would leave its backend running the statement with the lock
 * held, and the following runs would all be skipped until it ended.
 */
const RUN_STATEMENT_TIMEOUT_SECONDS = 15 * 60;

const JOBS = [
  { name: 'partition-maintenance', values: 'jobs.partitionMaintenance', deadlineSeconds: 1800 },
  // 16 min: a slow refresh holds the 5-min schedule meanwhile (Forbid), rather than being cut.
  {
    name: 'rollup-refresh',
    values: 'jobs.rollupRefresh',
    deadlineSeconds: RUN_STATEMENT_TIMEOUT_SECONDS + 60,
  },
] as const;

export class Jobs extends Construct {
  constructor(scope: Construct) {
    super(scope, 'jobs-component');
    new k8s.KubeServiceAccount(this, 'jobs-serviceaccount', {
      metadata: serviceAccountMetadata('jobs'),
      automountServiceAccountToken: false,
    });
    new k8s.KubeConfigMap(this, 'jobs-configmap', {
      metadata: metadata('jobs'),
      data: {
        ...databaseSettings('writer'),
        MAINTENANCE_MONTHS_AHEAD: valueText('jobs.partitionMaintenance.monthsAhead'),
        MAINTENANCE_ENABLED: valueText('jobs.enabled'),
        // 0 leaves it empty, which the jobs read as unset: never detach.
        MAINTENANCE_RETAIN_MONTHS: scalar(
          '{{ ternary (toString .Values.jobs.partitionMaintenance.retainMonths) "" (gt (int .Values.jobs.partitionMaintenance.retainMonths) 0) | toJson }}',
        ),
        MAINTENANCE_DETACH_LOCK_TIMEOUT: value('jobs.partitionMaintenance.detachLockTimeout'),
        LOG_LEVEL: value('jobs.logLevel'),
        SERVICE_VERSION: text('{{ .Chart.AppVersion }}'),
        [spread('(ternary .Values.jobs.extraEnv (dict) (kindIs "map" .Values.jobs.extraEnv))')]: '',
      },
    });
    for (const job of JOBS) {
      const cronJob = new k8s.KubeCronJob(this, `${job.name}-cronjob`, {
        // A CronJob's name has 52 characters at most: its Jobs append 11.
        metadata: { ...metadata('jobs', job.name), name: releaseName(job.name, 52) },
        spec: {
          schedule: value(`${job.values}.schedule`),
          concurrencyPolicy: 'Forbid',
          startingDeadlineSeconds: 300,
          successfulJobsHistoryLimit: 3,
          failedJobsHistoryLimit: 3,
          jobTemplate: {
            spec: {
              backoffLimit: 2,
              activeDeadlineSeconds: job.deadlineSeconds,
              ttlSecondsAfterFinished: 86_400,
              template: {
                metadata: { labels: { ...labels('jobs'), 'observatory.dev/job': job.name } },
                spec: {
                  ...podDefaults('jobs'),
                  restartPolicy: 'Never',
                  containers: [
                    {
                      name: job.name,
                      ...image('jobs'),
                      args: [job.name],
                      envFrom: [{ configMapRef: { name: releaseName('jobs') } }],
                      env: [databasePassword('writer')],
                      volumeMounts: [tmpMount],
                    },
                  ],
                },
              },
            },
          },
        },
      });
      podBlocks(cronJob, '/spec/jobTemplate/spec/template/spec', 'jobs.resources');
      credentialVolumes(cronJob, '/spec/jobTemplate/spec/template/spec', { database: 'writer' }, 'jobs');
      extraEnvItems(cronJob, '/spec/jobTemplate/spec/template/spec', 'jobs');
    }
  }
}
