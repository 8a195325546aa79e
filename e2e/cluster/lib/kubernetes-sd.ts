/**
 * Kubernetes service discovery (role `endpoints`) for Debian's Prometheus, whose build leaves
 * `kubernetes_sd_configs` out ("Kubernetes support has been completely removed", NEWS.Debian):
 * an HTTP SD endpoint (`http_sd_configs`) that reads a namespace's Endpoints, Services and Pods
 * through the API server and answers with the targets and `__meta_kubernetes_*` labels Prometheus'
 * own Kubernetes SD gives them, so the operator's relabelling applies unchanged.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kube } from './kube.js';

interface Meta {
  name: string;
  namespace: string;
  labels?: Record<string, string>;
}
interface Address {
  ip: string;
  targetRef?: { kind: string; name: string };
}
interface Endpoints {
  metadata: Meta;
  subsets?: {
    addresses?: Address[];
    notReadyAddresses?: Address[];
    ports?: { name?: string; port: number }[];
  }[];
}
interface Pod {
  metadata: Meta;
  spec: { nodeName?: string; containers: { name: string; ports?: { containerPort: number }[] }[] };
  status: { phase: string };
}

export interface TargetGroup {
  targets: string[];
  labels: Record<string, string>;
}

const metaName = (label: string) => label.replace(/[^a-zA-Z0-9_]/g, '_');

/** The target groups Prometheus' `endpoints` role makes of a namespace's objects. */
export async function endpointTargets(kube: Kube, namespace: string): Promise<TargetGroup[]> {
  const get = <T>(kind: string) => kube.getJson<{ items: T[] }>([kind, '--namespace', namespace]);
  const [endpoints, services, pods] = await Promise.all([
    get<Endpoints>('endpoints'),
    get<{ metadata: Meta }>('services'),
    get<Pod>('pods'),
  ]);
  const podByName = new Map(pods.items.map((p) => [p.metadata.name, p]));
  const groups: TargetGroup[] = [];
  for (const ep of endpoints.items) {
    const service = services.items.find((s) => s.metadata.name === ep.metadata.name);
    const serviceLabels: Record<string, string> = {
      __meta_kubernetes_namespace: namespace,
      __meta_kubernetes_service_name: ep.metadata.name,
      __meta_kubernetes_endpoints_name: ep.metadata.name,
    };
    for (const [k, v] of Object.entries(service?.metadata.labels ?? {})) {
      serviceLabels[`__meta_kubernetes_service_label_${metaName(k)}`] = v;
      serviceLabels[`__meta_kubernetes_service_labelpresent_${metaName(k)}`] = 'true';
    }
    for (const subset of ep.subsets ?? []) {
      const addresses = [
        ...(subset.addresses ?? []).map((a) => ({ a, ready: 'true' })),
        ...(subset.notReadyAddresses ?? []).map((a) => ({ a, ready: 'false' })),
      ];
      for (const { a, ready } of addresses)
        for (const port of subset.ports ?? []) {
          const pod = a.targetRef?.kind === 'Pod' ? podByName.get(a.targetRef.name) : undefined;
          const container = pod?.spec.containers.find((c) =>
            c.ports?.some((p) => p.containerPort === port.port),
          );
          groups.push({
            targets: [`${a.ip}:${port.port}`],
            labels: {
              ...serviceLabels,
              __meta_kubernetes_endpoint_port_name: port.name ?? '',
              __meta_kubernetes_endpoint_ready: ready,
              __meta_kubernetes_endpoint_address_target_kind: a.targetRef?.kind ?? '',
              __meta_kubernetes_endpoint_address_target_name: a.targetRef?.name ?? '',
              ...(pod && {
                __meta_kubernetes_pod_name: pod.metadata.name,
                __meta_kubernetes_pod_phase: pod.status.phase,
                __meta_kubernetes_pod_node_name: pod.spec.nodeName ?? '',
                __meta_kubernetes_pod_container_name: container?.name ?? '',
              }),
            },
          });
        }
    }
  }
  return groups;
}

/** Serves {@link endpointTargets} of `namespace` at `url` for `http_sd_configs`. */
export async function startKubernetesSd(
  kube: Kube,
  namespace: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => {
    endpointTargets(kube, namespace).then(
      (groups) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(groups)),
      (err: Error) => res.writeHead(500).end(err.message),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/targets`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
