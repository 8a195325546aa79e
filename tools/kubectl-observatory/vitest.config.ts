import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

// Unit tests beside the code: the status table, the SSE parser, the argument parser.
export default mergeConfig(sharedConfig, defineConfig({}));
