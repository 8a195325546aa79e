/**
 * For local tooling (`make dev`), not the controller: whether a cluster answers, and installing
 * the CRD. The controller never installs its own CRD (the chart does), so it needs no RBAC on
 * CustomResourceDefinitions.
 */
import { request } from 'node:https';
import { withTimeout } from '@event-observatory/service-kit/resilience';
import { KubeConfig, VersionApi } from '@kubernetes/client-node';
import { pipelineCrd } from '../pipeline/crd.js';

/**
 * The kubeconfig at `path`; without one, client-node's default: `KUBECONFIG`, else
 * `~/.kube/config`, else the pod's service account.
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (path) kubeConfig.loadFromFile(path);
  else kubeConfig.loadFromDefault();
  return kubeConfig;
}

/** The API server's version, or undefined when it does not answer within `timeoutMs`. */
export async function clusterVersion(kubeConfig: KubeConfig, timeoutMs = 3_000): Promise<string | undefined> {
  try {
    const info = await withTimeout(
      kubeConfig.makeApiClient(VersionApi).getCode(),
      timeoutMs,
      'version request',
    );
    return info.gitVersion;
  } catch {
    return undefined;
  }
}

/**
 * Server-side apply of `crds/pipeline.yaml`'s object (field manager `observatory-dev`). Sent as
 * raw JSON: client-node's typed models would drop the `x-kubernetes-*` keys of a plain object.
 */
export async function applyPipelineCrd(kubeConfig: KubeConfig): Promise<void> {
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(
    `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${pipelineCrd.metadata.name}?fieldManager=observatory-dev&force=true`,
    server,
  );
  const options: Parameters<typeof request>[1] = {
    method: 'PATCH',
    headers: { 'content-type': 'application/apply-patch+yaml' },
  };
  await kubeConfig.applyToHTTPSOptions(options);
  await new Promise<void>((resolve, reject) => {
    const req = request(url, options, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () =>
        (res.statusCode ?? 0) < 300 ? resolve() : reject(new Error(`CRD apply: ${res.statusCode} ${body}`)),
      );
    });
    req.on('error', reject);
    req.end(JSON.stringify(pipelineCrd));
  });
}
