import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';
export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: { include: ['src/config.test.ts', 'test/producer.test.ts'], globalSetup: ['./tmp-setup.ts'] },
  }),
);
