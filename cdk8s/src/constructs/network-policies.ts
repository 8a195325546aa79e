/**
 * NetworkPolicies: only what must talk talks. Ingest takes the producers' requests from anywhere
 * (authenticated; the Ingress controller is in another namespace). The consumer's probes and admin
 * API, the search UI and the controller take connections only from the release's own
 * pods and from the peers an operator lists (`networkPolicies.allowFrom` for all three: an
 * admin's namespace; `<component>.allowFrom` for one: the teams that read search). No policy here
 * opens a `metrics` port: Prometheus is admitted to those alone, by the scrape policy
 * (scrape-policies.ts). The migration and the jobs take none. Egress: DNS, and
 * `networkPolicies.egressTo` (Kafka, PostgreSQL, the API server, the collector; by default
 * anywhere but the link-local range of the cloud metadata services), and with the bundled pair
 * its pods by podSelector for their clients (bundled.ts' `bundledEgress`). The bundled Kafka's and
 * PostgreSQL's own policies are bundled-stateful.ts'.
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { bundledEgress } from '../bundled.js';
import { blocks, onlyIf, spreadAt, text } from '../helm.js';
import { metadata } from './common.js';

const port = (name: string) => ({ protocol: 'TCP', port: k8s.IntOrString.fromString(name) });

/** Egress to the cluster's DNS, which every policed pod keeps. */
export const DNS_EGRESS: k8s.NetworkPolicyEgressRule = {
  ports: [
    { protocol: 'UDP', port: k8s.IntOrString.fromNumber(53) },
    { protocol: 'TCP', port: k8s.IntOrString.fromNumber(53) },
  ],
};
const http = [port('http')];
const instance = { 'app.kubernetes.io/instance': text('{{ .Release.Name }}') };

export class NetworkPolicies extends Construct {
  constructor(scope: Construct) {
    super(scope, 'network-policies');
    // An empty `from` or `to` list would mean "everyone": the operator's peers are appended to a
    // non-empty list, and the schema refuses an empty egressTo.
    const policy = (component: string, ingress: k8s.NetworkPolicyIngressRule[], internal = false) => {
      const object = new k8s.KubeNetworkPolicy(this, `${component}-networkpolicy`, {
        metadata: metadata(component),
        spec: {
          podSelector: { matchLabels: { 'app.kubernetes.io/name': component, ...instance } },
          policyTypes: ['Ingress', 'Egress'],
          ingress,
          egress: [DNS_EGRESS, { to: [] }],
        },
      });
      blocks(object, {
        '/spec/egress/1/to': '.Values.networkPolicies.egressTo',
        ...(internal
          ? {
              '/spec/ingress/0/from': `(concat (list (dict "podSelector" (dict "matchLabels" (dict "app.kubernetes.io/instance" .Release.Name)))) .Values.networkPolicies.allowFrom .Values.${component}.allowFrom)`,
            }
          : {}),
      });
      spreadAt(object, '/spec/egress', bundledEgress(component));
    };
    policy('ingest', [{ ports: http }]);
    policy('consumer', [{ ports: [...http, port('admin')] }], true);
    for (const component of ['search', 'controller']) policy(component, [{ ports: http }], true);
    policy('jobs', []);
    policy('migration', []);
    onlyIf(this, '.Values.networkPolicies.enabled');
  }
}
