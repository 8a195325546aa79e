/**
 * The search UI and API. It has no login (Document 2): its Service is ClusterIP only and no Ingress
 * is made for it; an operator who wants it outside the cluster adds one knowingly.
 */
import { Construct } from 'constructs';
import { databasePassword, databaseSettings } from '../credentials.js';
import { scalar, text } from '../helm.js';
import { HTTP_PORT, secretEnv } from './common.js';
import { HttpService } from './http-service.js';

export class Search extends Construct {
  constructor(scope: Construct) {
    super(scope, 'search-component');
    new HttpService(this, {
      component: 'search',
      settings: {
        ...databaseSettings('reader'),
        PLAY_HTTP_PORT: String(HTTP_PORT),
        // The Host header must be one of these: by default the Service's own names.
        ALLOWED_HOSTS: scalar(
          '{{ .Values.search.allowedHosts | default (printf "%s-search,%s-search.%s,%s-search.%s.svc,localhost,127.0.0.1" .Release.Name .Release.Name .Release.Namespace .Release.Name .Release.Namespace) | toJson }}',
        ),
        NODE_ENV: text('production'),
      },
      secretEnv: [
        databasePassword('reader'),
        secretEnv('APPLICATION_SECRET', 'application'),
        // Prometheus scrapes /metrics at the pod's address, and Document 2 wants the scrape host
        // allowed: the pod IP joins the list (kubelet expands $(VAR) from envFrom and earlier env).
        { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: 'ALLOWED_HOSTS', value: '$(ALLOWED_HOSTS),$(POD_IP)' },
      ],
      terminationGracePeriodSeconds: 30,
      serviceTypeFromValues: true,
      connections: { database: 'reader' },
    });
  }
}
