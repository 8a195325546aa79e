/**
 * The search UI and API, behind the login `search.auth.mode` chooses (search-auth.ts). Its
 * Service is ClusterIP by default and no Ingress is made for it; an operator who wants it outside
 * the cluster adds one knowingly. Its visibility rules (`search.visibility.rules`) are a ConfigMap
 * mounted as `SEARCH_VISIBILITY_FILE`.
 */
import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { databasePassword, databaseSettings } from '../credentials.js';
import { releaseNameExpr, scalar, text } from '../helm.js';
import {
  SEARCH_AUTH_MOUNTS,
  SEARCH_AUTH_VOLUMES,
  searchApiAccess,
  searchAuthSettings,
  sessionSecretEnv,
} from '../search-auth.js';
import { HTTP_PORT, metadata, secretEnv } from './common.js';
import { HttpService } from './http-service.js';

const SERVICE = releaseNameExpr('search');
const VISIBILITY_DIR = '/etc/observatory/visibility';
const RULES = 'toYaml .Values.search.visibility.rules';

export class Search extends Construct {
  constructor(scope: Construct) {
    super(scope, 'search-component');
    new k8s.KubeConfigMap(this, 'search-visibility-configmap', {
      metadata: metadata('search', 'search-visibility'),
      data: { 'rules.yaml': scalar(`{{ ${RULES} | toJson }}`) },
    });
    new HttpService(this, {
      component: 'search',
      settings: {
        ...databaseSettings('reader'),
        PLAY_HTTP_PORT: String(HTTP_PORT),
        // The Host header must be one of these: by default every name of the Service (its
        // ClusterIP joins below), and loopback for a port-forward.
        ALLOWED_HOSTS: scalar(
          `{{ .Values.search.allowedHosts | default (printf "%[1]s,%[1]s.%[2]s,%[1]s.%[2]s.svc,%[1]s.%[2]s.svc.%[3]s,localhost,127.0.0.1,::1" ${SERVICE} .Release.Namespace .Values.clusterDomain) | toJson }}`,
        ),
        NODE_ENV: text('production'),
        ...searchAuthSettings(),
        SEARCH_VISIBILITY_FILE: text(`${VISIBILITY_DIR}/rules.yaml`),
      },
      // New rules roll the pods: the service reads them once, at start.
      podAnnotations: { 'checksum/visibility': scalar(`{{ ${RULES} | sha256sum | toJson }}`) },
      secretEnv: [
        databasePassword('reader'),
        secretEnv('APPLICATION_SECRET', 'application'),
        sessionSecretEnv(),
        // A client of the pod's own address is allowed too: the pod IP joins the list (kubelet
        // expands $(VAR) from envFrom and earlier env). Prometheus scrapes the metrics port, which
        // checks no Host.
        { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        // The kubelet gives every pod `<SERVICE>_SERVICE_HOST` of the Services that existed when
        // it started: the search Service's ClusterIP (Helm creates Services before Deployments).
        {
          name: 'SERVICE_IP',
          value: scalar(`{{ printf "$(%s_SERVICE_HOST)" (${SERVICE} | upper | replace "-" "_") | toJson }}`),
        },
        { name: 'ALLOWED_HOSTS', value: '$(ALLOWED_HOSTS),$(POD_IP),$(SERVICE_IP)' },
      ],
      shutdownBoundSeconds: 15, // main.ts: installShutdown's timeout
      autoscaled: true,
      serviceTypeFromValues: true,
      connections: { database: 'reader' },
      files: {
        volumes: `(concat ${SEARCH_AUTH_VOLUMES} (list (dict "name" "visibility" "configMap" (dict "name" ${releaseNameExpr('search-visibility')}))))`,
        mounts: `(concat ${SEARCH_AUTH_MOUNTS} (list (dict "name" "visibility" "mountPath" "${VISIBILITY_DIR}" "readOnly" true)))`,
      },
      apiAccess: searchApiAccess(),
    });
  }
}
