import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

// Unit tests only: the integration suite runs on a real cluster (e2e/cluster/controller.test.ts).
export default mergeConfig(sharedConfig, defineConfig({ test: { include: ['src/**/*.test.ts'] } }));
