import type { TestProject } from 'vitest/node';
import { type GiteaHandle, startGitea } from './gitea-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    gitea: { baseUri: string; version: string; adminToken: string; reviewerToken: string };
  }
}

let handle: GiteaHandle | undefined;

const stopOnSignal = () => {
  void handle?.stop().finally(() => process.exit(130));
};

/** Builds (cold) or finds (warm) the Gitea binary, starts one server for the run, stops it after. */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const t0 = Date.now();
  handle = await startGitea();
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  console.log(`[forge-client] gitea ${handle.version} at ${handle.baseUri} ready in ${Date.now() - t0} ms`);
  project.provide('gitea', {
    baseUri: handle.baseUri,
    version: handle.version,
    adminToken: handle.adminToken,
    reviewerToken: handle.reviewerToken,
  });
  return async () => {
    process.off('SIGINT', stopOnSignal);
    process.off('SIGTERM', stopOnSignal);
    await handle?.stop();
    handle = undefined;
  };
}
