// ESM app under Jest: swc compiles TypeScript (decorators + metadata on) to ESM;
// CommonJS packages that require() ESM-only ones are compiled to CommonJS.
const swcTs = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2023',
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['@swc/jest', swcTs],
    'node_modules/(light-my-request)/.+\\.js$': ['@swc/jest', { module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['node_modules/(?!(light-my-request)/)'],
  setupFiles: ['<rootDir>/test/support/jest.setup.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
};
