import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../vitest.shared.js';

/**
 * The fault suite (reliability/faults/): a Kafka and a PostgreSQL of its own, which it kills and
 * stops, so no shared global stack. `FAULT_SOAK=1` (make soak) runs minutes per fault.
 */
const soak = process.env.FAULT_SOAK === '1';

export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: {
      include: ['reliability/faults/**/*.test.ts'],
      fileParallelism: false,
      testTimeout: soak ? 20 * 60_000 : 180_000,
      hookTimeout: 300_000,
    },
  }),
);
