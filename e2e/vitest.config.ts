import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../vitest.shared.js';

export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: {
      include: [
        'pipeline/**/*.test.ts',
        'maintenance/**/*.test.ts',
        'browser/**/*.test.ts',
        'observability/**/*.test.ts',
        'reliability/security/**/*.test.ts',
      ],
      globalSetup: ['@event-observatory/devstack/vitest-setup'],
      testTimeout: 120_000,
    },
  }),
);
