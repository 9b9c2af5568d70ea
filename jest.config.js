import { SWC_TS } from './scripts/swc-options.js';

// ESM app under Jest: swc compiles TypeScript (decorators + metadata on) to ESM
// (scripts/swc-options.js); CommonJS packages that require() ESM-only ones to CommonJS.

/**
 * Packages compiled to CommonJS under Jest: light-my-request requires an
 * ESM-only package; content-disposition is ESM-only and required by
 * @fastify/static (Swagger UI).
 */
const CJS_INTEROP = 'light-my-request|content-disposition';

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  testMatch: [
    '<rootDir>/src/**/*.spec.ts',
    '<rootDir>/test/**/*.e2e-spec.ts',
    // The database tier: stores and triggers against a migrated database, without the app.
    '<rootDir>/test/db/**/*.db-spec.ts',
  ],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['@swc/jest', SWC_TS],
    [`node_modules/(${CJS_INTEROP})/.+\\.js$`]: ['@swc/jest', { module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`node_modules/(?!(${CJS_INTEROP})/)`],
  setupFiles: ['<rootDir>/test/support/jest.setup.ts'],
  // Each file's Redis keys are deleted when it ends.
  setupFilesAfterEnv: ['<rootDir>/test/support/jest.after-env.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
};
