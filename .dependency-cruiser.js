// Layering of src/, checked by `npm run lint` through scripts/depcruise.js, which adds the
// rule no-circular-between-folders (no cycle between src/<folder>s, where a folder is the
// first path segment under src/): dependency-cruiser's folder rules see every directory
// level as a folder and so miss cycles that enter a folder through a subfolder.
// `npx depcruise src --config .dependency-cruiser.js` checks the rules below alone.
// Unit tests (*.spec.ts) sit beside the code but are not part of the build, so they are not
// cruised: nothing imports them (they cannot close a cycle) and tsc checks their imports.

/**
 * Files besides the stores and src/database/ that may import the database driver, each
 * for a reason no store can serve.
 */
const ALLOWED_DRIVER_USERS = [
  // The start-up check probes PostgreSQL on a connection of its own, before the app (and
  // with it the DataSource the stores use) exists, and says why it cannot connect.
  '^src/startup/dependency-checks\\.ts$',
];

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No module takes part in an import cycle (type-only imports included).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'Every import resolves to a file, a package or a node builtin.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'common-depends-on-nothing-in-src',
      severity: 'error',
      comment: 'src/common uses node builtins and packages only.',
      from: { path: '^src/common/' },
      to: { path: '^src/', pathNot: '^src/common/' },
    },
    {
      name: 'config-depends-only-on-common',
      severity: 'error',
      comment: 'src/config may use src/common and nothing else under src/.',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/(config|common)/' },
    },
    {
      name: 'platform-depends-only-on-common-config',
      severity: 'error',
      comment:
        'src/platform may use src/common and src/config and nothing else (metrics observe it through PLATFORM_CALL_OBSERVER).',
      from: { path: '^src/platform/' },
      to: { path: '^src/', pathNot: '^src/(platform|common|config)/' },
    },
    {
      name: 'controllers-only-from-modules',
      severity: 'error',
      comment: 'A controller is imported by *.module.ts files only.',
      from: { pathNot: '\\.module\\.ts$' },
      to: { path: '\\.controller\\.ts$' },
    },
    {
      name: 'stores-do-not-import-services-or-controllers',
      severity: 'error',
      comment: 'Stores are the bottom layer above database/common/config.',
      from: { path: '\\.store\\.ts$' },
      to: { path: '\\.(service|controller)\\.ts$' },
    },
    {
      name: 'database-driver-only-in-stores',
      severity: 'error',
      comment:
        'Stores (*.store.ts) own all SQL, on what src/database/ sets up: nothing else imports ' +
        'the database driver (pg) or TypeORM (DataSource, EntityManager). Allowed besides, ' +
        'listed with its reason in ALLOWED_DRIVER_USERS.',
      from: {
        path: '^src/',
        pathNot: ['\\.store\\.ts$', '^src/database/', ...ALLOWED_DRIVER_USERS],
      },
      to: { path: '(^|/)node_modules/(pg|pg-[^/]+|typeorm|@nestjs/typeorm)/' },
    },
    {
      name: 'services-do-not-import-controllers',
      severity: 'error',
      from: { path: '\\.service\\.ts$' },
      to: { path: '\\.controller\\.ts$' },
    },
    {
      name: 'src-does-not-import-tools',
      severity: 'error',
      comment: 'The application does not import test/, bench/, demo/ or simulator/.',
      from: { path: '^src/' },
      to: { path: '^(test|bench|demo|simulator)/' },
    },
  ],
  options: {
    exclude: { path: '\\.spec\\.ts$' },
    doNotFollow: { path: 'node_modules' },
    // Count `import type` and other imports that vanish on compilation.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
