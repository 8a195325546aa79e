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

const JOBS = [
  { name: 'partition-maintenance', values: 'jobs.partitionMaintenance', deadlineSeconds: 1800 },
  { name: 'rollup-refresh', values: 'jobs.rollupRefresh', deadlineSeconds: 240 },
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
