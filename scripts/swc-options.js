// How swc compiles the service's TypeScript outside the build (Jest, scripts/ts-hooks.js):
// legacy decorators with their metadata, as Nest's DI needs, to ESM.

/** @type {import('@swc/core').Options} */
export const SWC_TS = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2023',
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};
