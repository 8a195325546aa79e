/** The ingestion API: Deployment and Service (http-service.ts), and the optional Ingress producers use. */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { ingestApiAccess, ingestAuthSettings, keyEnv } from '../auth.js';
import { kafkaBootstrap } from '../bundled.js';
import { kafkaSecuritySettings } from '../credentials.js';
import { blocks, onlyIf, releaseName, scalar, value } from '../helm.js';
import { HTTP_PORT, metadata } from './common.js';
import { HttpService } from './http-service.js';

export class Ingest extends Construct {
  constructor(scope: Construct) {
    super(scope, 'ingest-component');
    new HttpService(this, {
      component: 'ingest',
      settings: {
        BROKER_BOOTSTRAP_SERVERS: kafkaBootstrap(),
        BROKER_TOPIC: value('pipeline.topic'),
        ...kafkaSecuritySettings(),
        ...ingestAuthSettings(),
      },
      secretEnv: [keyEnv('AUTH', 'auth')],
      apiAccess: ingestApiAccess(),
      connections: { kafka: true },
      // Document 1: stop the listener, drain the producer (BROKER_CLOSE_TIMEOUT 10 s), close telemetry.
      terminationGracePeriodSeconds: 30,
    });
    const ingress = new k8s.KubeIngress(this, 'ingest-ingress', {
      metadata: metadata('ingest'),
      spec: {
        ingressClassName: scalar('{{ .Values.ingest.ingress.className | default nil | toJson }}'),
        rules: [
          {
            host: value('ingest.ingress.host'),
            http: {
              paths: [
                {
                  path: '/v1',
                  pathType: 'Prefix',
                  backend: { service: { name: releaseName('ingest'), port: { number: HTTP_PORT } } },
                },
              ],
            },
          },
        ],
      },
    });
    blocks(ingress, {
      '/metadata/annotations': '(merge (dict) .Values.ingest.ingress.annotations .Values.commonAnnotations)',
      '/spec/tls': `(ternary (list (dict "hosts" (list .Values.ingest.ingress.host) "secretName" .Values.ingest.ingress.tlsSecret)) list (ne .Values.ingest.ingress.tlsSecret ""))`,
    });
    onlyIf(ingress, '.Values.ingest.ingress.enabled');
  }
}
