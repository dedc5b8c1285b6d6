import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/global-setup.ts'],
          pool: 'forks',
          // Two cores: two files at a time keeps servers and Postgres from starving each other.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          environment: 'node',
          // Builds the Kubernetes binaries once (cached outside the clone); see test/cluster/README.md.
          globalSetup: ['test/cluster/global-setup.ts'],
          pool: 'forks',
          // Each file runs a whole control plane; one at a time on two cores.
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
          testTimeout: 180_000,
          hookTimeout: 240_000,
        },
      },
    ],
  },
});
