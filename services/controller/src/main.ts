/**
 * Entry point: configuration -> service -> listener and metrics listener -> shutdown. Wiring only.
 */
import {
  createLogger,
  createMetrics,
  installShutdown,
  metricsPort,
  readConfig,
  readListenerTimeouts,
  runMain,
  serveApp,
  serveMetrics,
} from '@event-observatory/service-kit';
import { readControllerConfig } from './config.js';
import { loadKubeConfig } from './kube/install.js';
import { createControllerService } from './service.js';

await runMain(async () => {
  const config = readControllerConfig(process.env);
  const timeouts = readListenerTimeouts(process.env);
  const listener = readConfig(process.env, { metricsPort: metricsPort() });
  const logger = createLogger({ service: 'controller', level: config.logLevel });
  const { registry } = createMetrics({ service: 'controller', version: config.serviceVersion });
  const kubeConfig = loadKubeConfig(); // KUBECONFIG, else ~/.kube/config, else the pod's service account
  const service = createControllerService({ config, kubeConfig, registry, logger });
  const server = await serveApp(service.app, { host: config.httpHost, port: config.httpPort, timeouts });
  const metrics = await serveMetrics(registry, {
    host: config.httpHost,
    port: listener.metricsPort,
    timeouts,
  });
  logger.info(
    { url: server.url, metricsUrl: metrics.url, identity: service.identity },
    'controller listening',
  );
  service.start();
  installShutdown({
    steps: [
      { name: 'controller', run: () => service.stop() },
      { name: 'listener', run: () => server.close() },
      { name: 'kafka', run: () => service.closeKafka() },
      { name: 'metrics listener', run: () => metrics.close() },
    ],
    timeoutMs: 15_000,
    logger,
  });
});
