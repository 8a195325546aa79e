/**
 * The optional Gateway API HTTPRoute of the ingestion API (`ingest.httpRoute`), beside the Ingress
 * (whose API is frozen upstream): the same paths to the ingest Service, attached to the Gateway(s)
 * the operator names. TLS is the Gateway listener's, not the route's.
 */

import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { blocks, onlyIf, releaseName } from '../helm.js';
import { HTTP_PORT, metadata } from './common.js';
import { INGEST_ROUTES } from './ingest.js';

export class IngestHttpRoute extends Construct {
  constructor(scope: Construct) {
    super(scope, 'ingest-http-route');
    const route = new ApiObject(this, 'ingest-httproute', {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: metadata('ingest'),
      spec: {
        rules: [
          {
            matches: INGEST_ROUTES.map(({ path, exact }) => ({
              path: { type: exact ? 'Exact' : 'PathPrefix', value: path },
            })),
            backendRefs: [{ name: releaseName('ingest'), port: HTTP_PORT }],
          },
        ],
      },
    });
    // `or` stops at its first non-empty argument: the `fail` runs only when no Gateway is named.
    blocks(route, {
      '/metadata/annotations':
        '(merge (dict) .Values.ingest.httpRoute.annotations .Values.commonAnnotations)',
      '/spec/parentRefs':
        '(or .Values.ingest.httpRoute.parentRefs (fail "ingest.httpRoute.parentRefs: name the Gateway the route attaches to ({name: ..., namespace: ...})"))',
      '/spec/hostnames': '.Values.ingest.httpRoute.hostnames',
    });
    onlyIf(route, '.Values.ingest.httpRoute.enabled');
  }
}
