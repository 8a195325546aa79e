/**
 * The maintenance CronJobs of Document 2 (services/jobs): partition-maintenance every 6 h and
 * rollup-refresh every 5 min by default. Never two runs at once (the jobs also lock in the
 * database), a deadline on each run, a short history.
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { credentialVolumes, databasePassword, databaseSettings } from '../credentials.js';
import { releaseName, value, valueText } from '../helm.js';
import {
  containerSecurityContext,
  image,
  labels,
  metadata,
  podBlocks,
  podDefaults,
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
      metadata: metadata('jobs'),
      automountServiceAccountToken: false,
    });
    new k8s.KubeConfigMap(this, 'jobs-configmap', {
      metadata: metadata('jobs'),
      data: {
        ...databaseSettings('writer'),
        MAINTENANCE_MONTHS_AHEAD: valueText('jobs.partitionMaintenance.monthsAhead'),
      },
    });
    for (const job of JOBS) {
      const cronJob = new k8s.KubeCronJob(this, `${job.name}-cronjob`, {
        metadata: metadata('jobs', job.name),
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
                      securityContext: containerSecurityContext,
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
      credentialVolumes(cronJob, '/spec/jobTemplate/spec/template/spec', { database: 'writer' });
    }
  }
}
