/** The ingestion API: Deployment and Service (http-service.ts), and the optional Ingress producers use. */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { ingestApiAccess, ingestAuthSettings, keyEnv } from '../auth.js';
import { kafkaBootstrap } from '../bundled.js';
import { kafkaSecuritySettings } from '../credentials.js';
import { blocks, onlyIf, releaseName, scalar, value } from '../helm.js';
import { HTTP_PORT, metadata } from './common.js';
import { HttpService } from './http-service.js';

/** What producers and their developers reach from outside: the API, its docs, its description. */
export const INGEST_ROUTES = [
  { path: '/v1', exact: false },
  { path: '/docs', exact: false },
  { path: '/openapi.json', exact: true },
];

/**
 * Producers send bearer tokens and their events through the Ingress: without a TLS Secret both
 * would cross the network in clear, so the template refuses unless the operator says so (written
 * before the host, as a `ternary` evaluates both branches and cannot hold a `fail`).
 */
const INSECURE_REFUSAL =
  '{{ if not (or .Values.ingest.ingress.tlsSecret .Values.ingest.ingress.allowInsecure) }}{{ fail "ingest.ingress.tlsSecret: name the Secret with the TLS certificate of ingest.ingress.host (producers send bearer tokens), or set ingest.ingress.allowInsecure=true to serve plain HTTP (e.g. TLS ends before the ingress controller)" }}{{ end }}';

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
      // main.ts: the listener's drain (BROKER_DELIVERY_TIMEOUT 10 s), the producer's close
      // (BROKER_CLOSE_TIMEOUT 10 s) plus one request (BROKER_REQUEST_TIMEOUT 5 s), plus 5 s.
      shutdownBoundSeconds: 30,
      autoscaled: true,
      // A Kafka outage is every pod's: by default they stay behind the Service and answer the
      // spec's 503 body rather than leave producers to an ingress's own error page (README: Probes).
      readinessPath: scalar(
        '{{ ternary "/health/ready" "/health/live" .Values.ingest.brokerGatesReadiness | toJson }}',
      ),
    });
    const ingress = new k8s.KubeIngress(this, 'ingest-ingress', {
      metadata: metadata('ingest'),
      spec: {
        ingressClassName: scalar('{{ .Values.ingest.ingress.className | default nil | toJson }}'),
        rules: [
          {
            host: scalar(`${INSECURE_REFUSAL}{{ .Values.ingest.ingress.host | toJson }}`),
            http: {
              paths: INGEST_ROUTES.map(({ path, exact }) => ({
                path,
                pathType: exact ? 'Exact' : 'Prefix',
                backend: { service: { name: releaseName('ingest'), port: { number: HTTP_PORT } } },
              })),
            },
          },
        ],
      },
    });
    // ingress-nginx refuses bodies over 1 MiB by default; an 8 MiB batch needs its annotation.
    // The operator's own annotations win.
    blocks(ingress, {
      '/metadata/annotations':
        '(merge (dict) .Values.ingest.ingress.annotations .Values.commonAnnotations (dict "nginx.ingress.kubernetes.io/proxy-body-size" .Values.ingest.ingress.maxBodySize))',
      '/spec/tls': `(ternary (list (dict "hosts" (list .Values.ingest.ingress.host) "secretName" .Values.ingest.ingress.tlsSecret)) list (ne .Values.ingest.ingress.tlsSecret ""))`,
    });
    onlyIf(ingress, '.Values.ingest.ingress.enabled');
  }
}
