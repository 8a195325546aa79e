import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKafka } from '@event-observatory/devstack';
export default async function setup(project: any) {
  const dir = mkdtempSync(join(tmpdir(), 'tmpk-'));
  chmodSync(dir, 0o755);
  const kafka = await startKafka({ dataDir: dir, settings: { 'message.max.bytes': '2097152' } });
  project.provide('stack', { bootstrapServers: kafka.bootstrapServers, databaseUrl: '' });
  return async () => {
    await kafka.stop();
  };
}
