import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

// Unit tests beside the code, and the fast tier in test/: the controller loop against an in-memory
// API server and one real Kafka started for the run (test/kafka-setup.ts). The end-to-end suite
// runs on a real cluster (e2e/cluster/controller.test.ts).
export default mergeConfig(sharedConfig, defineConfig({ test: { globalSetup: ['./test/kafka-setup.ts'] } }));
