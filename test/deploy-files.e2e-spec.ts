import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { load, loadAll } from 'js-yaml';
import { ConfigValidationError, loadConfig, type Environment } from '../src/config/load-config.js';

/**
 * The deployment files, checked without Docker or a cluster: docker-compose.yml
 * against the Compose Specification's JSON schema, every Kubernetes manifest
 * against strict JSON schemas of the Kubernetes API (both vendored in
 * test/fixtures/, see its README), and the rules the schemas cannot state.
 */

const COMPOSE_FILE = 'docker-compose.yml';
const ENV_EXAMPLE = '.env.example';
/** What `kubectl apply -f deploy/kubernetes/` applies: that folder's files, not its subfolders. */
const APPLIED = 'deploy/kubernetes';
const MIGRATION_JOB = 'deploy/kubernetes/migrate';
const EXAMPLE_SECRET = 'deploy/examples/secret.example.yaml';
/** How long main.ts lets in-flight work finish after SIGTERM (SHUTDOWN_GRACE_MS). */
const SHUTDOWN_GRACE_S = 25;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function object(value: unknown, what: string): JsonObject {
  if (!isObject(value)) throw new Error(`${what} is not a mapping`);
  return value;
}

const clone = <T>(value: T): T => structuredClone(value);

/** A scalar as text; anything else as JSON (never `[object Object]`). */
const text = (value: Json | undefined): string =>
  typeof value === 'string' ? value : JSON.stringify(value ?? null);

function formatErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map(
      (error) =>
        `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`,
    )
    .join('\n');
}

/* ------------------------------------------------------------------ Compose */

/** A required variable Compose found unset or empty: it stops before starting anything. */
class MissingVariableError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`required variable ${variable} is missing a value: ${detail}`);
  }
}

/**
 * Compose's interpolation of one string (the forms this repository may use):
 * `$$`, `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`,
 * `${VAR?error}`, `${VAR:+alt}`, `${VAR+alt}`. Anything else throws, so a form
 * this check does not know fails the test instead of passing unread.
 */
function interpolate(source: string, env: Environment): string {
  return source.replace(
    /\$(?:(\$)|([A-Za-z_][A-Za-z0-9_]*)|\{([^}]*)\})/g,
    (whole, dollar: string | undefined, bare: string | undefined, braced: string | undefined) => {
      if (dollar !== undefined) return '$';
      if (bare !== undefined) return env[bare] ?? '';
      const match = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?+])(.*))?$/s.exec(braced ?? '');
      if (!match) throw new Error(`interpolation this check does not know: ${whole}`);
      const [, name, colon, operator, word] = match;
      const value = env[name];
      const missing = colon ? value === undefined || value === '' : value === undefined;
      if (operator === undefined) return value ?? '';
      if (operator === '-') return missing ? word : (value ?? '');
      if (operator === '+') return missing ? '' : word;
      if (missing) throw new MissingVariableError(name, word);
      return value ?? '';
    },
  );
}

/** Interpolates every string value (not keys), as Compose does before validating. */
function interpolateAll(value: Json, env: Environment): Json {
  if (typeof value === 'string') return interpolate(value, env);
  if (Array.isArray(value)) return value.map((item) => interpolateAll(item, env));
  if (isObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolateAll(item, env)]),
    );
  }
  return value;
}

function readCompose(): JsonObject {
  return object(load(readFileSync(COMPOSE_FILE, 'utf8')), COMPOSE_FILE);
}

/** `.env.example` as `cp .env.example .env` gives it to Compose and to the process. */
function envExample(): Environment {
  return parseEnv(readFileSync(ENV_EXAMPLE, 'utf8'));
}

/** The secrets production refuses to start without, as loadConfig names them. */
function secretsProductionRequires(): string[] {
  try {
    loadConfig({ NODE_ENV: 'production' });
  } catch (error) {
    if (!(error instanceof ConfigValidationError)) throw error;
    return error.problems
      .filter((line) => / is required when NODE_ENV=production/.test(line))
      .map((line) => line.split(' ')[0]);
  }
  throw new Error('production started without any secret');
}

/** A .env an operator filled in: the example with every required secret set. */
function filledEnv(): Environment {
  return {
    ...envExample(),
    PLATFORM_VERIFY_TOKEN: 'verify-token-4f1c9a7e',
    PLATFORM_APP_SECRET: 'app-secret-8d2b6c31',
    ADMIN_PASSWORD: 'a-long-admin-password-2931',
    JWT_SECRET: 'Zp4rT8qL2mX9vB6nK1cW7yH3dF5gJ0sA+e/uQ',
    ENCRYPTION_KEY: 'a3f1c9e27b4d8a6f0e5c1b9d7a3f2e8c4b6d0a9f1e7c3b5d8a2f6e0c4b1d9a7e',
    METRICS_TOKEN: 'metrics-token-6e2a9c4f',
    POSTGRES_PASSWORD: '8c1f5a9e3b7d2c6a0f4e8b1d5c9a3e7f2b6d0c4a8e1f5b9d',
  };
}

function composeSchema(): ValidateFunction {
  const schema = object(
    JSON.parse(readFileSync('test/fixtures/compose-spec.schema.json', 'utf8')),
    'the Compose schema',
  );
  // The schema names draft-07 as https://json-schema.org/draft-07/schema, Ajv's built-in
  // draft-07 under another URI (so the schema itself is not validated), and leaves some
  // types implicit and some unions, which Ajv's strict mode would only warn about.
  return new Ajv({
    allErrors: true,
    validateSchema: false,
    allowUnionTypes: true,
    strictTypes: false,
  }).compile(schema);
}

describe('docker-compose.yml', () => {
  const validate = composeSchema();

  const services = (compose: Json): Record<string, JsonObject> =>
    Object.fromEntries(
      Object.entries(object(object(compose, COMPOSE_FILE).services, 'services')).map(
        ([name, service]) => [name, object(service, name)],
      ),
    );

  it('is valid against the Compose Specification, as written and once interpolated', () => {
    const compose = readCompose();
    expect(validate(compose) ? '' : formatErrors(validate.errors)).toBe('');
    const interpolated = interpolateAll(compose, filledEnv());
    expect(validate(interpolated) ? '' : formatErrors(validate.errors)).toBe('');
  });

  it('is refused by the schema when a service has an unknown key or a malformed env_file', () => {
    const unknownKey = interpolateAll(readCompose(), filledEnv());
    services(unknownKey).api.imagee = 'messaging-connector';
    expect(validate(unknownKey)).toBe(false);
    expect(formatErrors(validate.errors)).toContain('imagee');

    const badEnvFile = interpolateAll(readCompose(), filledEnv());
    services(badEnvFile).worker.env_file = [{ path: '.env', requird: true }];
    expect(validate(badEnvFile)).toBe(false);
  });

  it('refuses to start when .env is the example as copied, naming each missing secret', () => {
    const required = [...secretsProductionRequires(), 'POSTGRES_PASSWORD'];
    expect(required).toEqual(
      expect.arrayContaining([
        'PLATFORM_VERIFY_TOKEN',
        'PLATFORM_APP_SECRET',
        'ADMIN_PASSWORD',
        'JWT_SECRET',
        'ENCRYPTION_KEY',
        'METRICS_TOKEN',
      ]),
    );
    expect(() => interpolateAll(readCompose(), envExample())).toThrow(MissingVariableError);
    // Each one alone stops Compose, with a message that names it.
    for (const name of required) {
      const env = { ...filledEnv(), [name]: '' };
      expect(() => interpolateAll(readCompose(), env)).toThrow(
        new RegExp(`required variable ${name} is missing a value: set ${name} in \\.env`),
      );
      const unset = filledEnv();
      delete unset[name];
      expect(() => interpolateAll(readCompose(), unset)).toThrow(`required variable ${name}`);
    }
  });

  it('runs production whatever the shell or .env say, and requires .env', () => {
    const env = { ...filledEnv(), NODE_ENV: 'development' };
    const all = services(interpolateAll(readCompose(), env));
    for (const name of ['api', 'worker']) {
      const service = all[name];
      expect(object(service.environment, `${name}.environment`).NODE_ENV).toBe('production');
      expect(service.env_file).toEqual([{ path: '.env', required: true }]);
    }
    // What the containers get is a configuration production accepts.
    const { config } = loadConfig({
      ...env,
      ...(object(all.api.environment, 'api.environment') as Record<string, string>),
    });
    expect(config.isProduction).toBe(true);
  });

  it('publishes only the API, on the loopback interface unless told otherwise', () => {
    const published = (env: Environment): JsonObject[] =>
      Object.values(services(interpolateAll(readCompose(), env))).flatMap((service) =>
        ((service.ports ?? []) as Json[]).map((port) => object(port, 'a port (long syntax)')),
      );
    const ports = published(filledEnv());
    expect(ports).toEqual([
      { target: 3000, host_ip: '127.0.0.1', published: '3000', protocol: 'tcp' },
    ]);
    const withoutExample = { ...filledEnv() };
    delete withoutExample.API_PUBLISH_ADDRESS;
    expect(published(withoutExample)[0].host_ip).toBe('127.0.0.1');
    expect(published({ ...filledEnv(), API_PUBLISH_ADDRESS: '0.0.0.0' })[0].host_ip).toBe(
      '0.0.0.0',
    );
  });

  it('states the Compose version it needs (env_file with required: 2.24)', () => {
    expect(readFileSync(COMPOSE_FILE, 'utf8')).toMatch(/Docker Compose v2\.24\.0 or later/);
    expect(readFileSync('README.md', 'utf8')).toMatch(/Docker Compose 2\.24\.0 or later/);
  });
});

describe('Dockerfile', () => {
  it('runs the service with the Node flags of npm run start:prod (what the bench measures)', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'));
    const options = /^ENV NODE_OPTIONS="([^"]*)"$/m.exec(runtime)?.[1];
    const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as {
      scripts: Record<string, string>;
    };
    const startProd = /^node (.*) dist\/main\.js$/.exec(scripts['start:prod'])?.[1];
    expect(options).toMatch(/--max-old-space-size=\d+/);
    expect(options).toBe(startProd);
    expect(runtime).toMatch(/^CMD \["node", "dist\/main\.js"\]$/m);
  });
});

describe('.env.example', () => {
  it('says production, and production refuses it until every secret is filled in', () => {
    const example = envExample();
    expect(example.NODE_ENV).toBe('production');
    let problems: string[] = [];
    try {
      loadConfig(example);
    } catch (error) {
      if (!(error instanceof ConfigValidationError)) throw error;
      problems = error.problems;
    }
    for (const name of secretsProductionRequires()) {
      expect(problems).toContainEqual(expect.stringMatching(new RegExp(`^${name} is required`)));
    }
    expect(() => loadConfig(filledEnv())).not.toThrow();
  });

  it('still starts in development, on the development fallbacks', () => {
    const { config, warnings } = loadConfig({ ...envExample(), NODE_ENV: 'development' });
    expect(config.isProduction).toBe(false);
    expect(warnings.length).toBeGreaterThan(0);
  });
});

/* --------------------------------------------------------------- Kubernetes */

interface Manifest {
  file: string;
  index: number;
  document: JsonObject;
}

interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  allowPrivilegeEscalation?: boolean;
  privileged?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type?: string };
}

interface Container {
  name: string;
  image?: string;
  command?: string[];
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  lifecycle?: { preStop?: { exec?: { command?: string[] }; sleep?: { seconds: number } } };
  securityContext?: SecurityContext;
}

interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
  securityContext?: SecurityContext;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  volumes?: JsonObject[];
  terminationGracePeriodSeconds?: number;
}

interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: PodSpec;
}

/** apiVersion/kind → its definition in the vendored Kubernetes schema. */
const KINDS: Record<string, string> = {
  'v1/ConfigMap': 'ConfigMap',
  'v1/Secret': 'Secret',
  'v1/Service': 'Service',
  'apps/v1/Deployment': 'Deployment',
  'batch/v1/Job': 'Job',
  'policy/v1/PodDisruptionBudget': 'PodDisruptionBudget',
  'networking.k8s.io/v1/Ingress': 'Ingress',
};

function yamlFiles(folder: string, recursive: boolean): string[] {
  return readdirSync(folder)
    .sort()
    .flatMap((name) => {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) return recursive ? yamlFiles(path, true) : [];
      return /\.ya?ml$/.test(name) ? [path] : [];
    });
}

function manifests(files: string[]): Manifest[] {
  return files.flatMap((file) =>
    loadAll(readFileSync(file, 'utf8'))
      .filter((document) => document !== null && document !== undefined)
      .map((document, index) => ({ file, index, document: object(document, `${file}#${index}`) })),
  );
}

const kindOf = (manifest: Manifest): string =>
  `${text(manifest.document.apiVersion)}/${text(manifest.document.kind)}`;

const nameOf = (manifest: Manifest): string =>
  text(object(manifest.document.metadata, 'metadata').name);

function kubernetesValidators(): (document: JsonObject) => string {
  const schema = object(
    JSON.parse(readFileSync('test/fixtures/kubernetes-1.30-strict.schema.json', 'utf8')),
    'the Kubernetes schema',
  );
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  ajv.addSchema(schema, 'kubernetes');
  const validators = new Map<string, ValidateFunction>();
  return (document) => {
    const kind = `${text(document.apiVersion)}/${text(document.kind)}`;
    const definition = KINDS[kind];
    if (!definition) return `no schema for ${kind}`;
    if (!validators.has(kind)) {
      validators.set(kind, ajv.compile({ $ref: `kubernetes#/definitions/${definition}` }));
    }
    const validate = validators.get(kind)!;
    return validate(document) ? '' : formatErrors(validate.errors);
  };
}

/** The pod template of a workload (Deployment, Job…), or null for other kinds. */
function podTemplateOf(document: JsonObject): PodTemplate | null {
  const spec = document.spec;
  if (!isObject(spec) || !isObject(spec.template)) return null;
  return spec.template as unknown as PodTemplate;
}

/**
 * What keeps a pod from the Pod Security Standard "restricted" (its controls
 * for privilege, capabilities, non-root, seccomp and host namespaces). Each
 * container must say runAsNonRoot, allowPrivilegeEscalation: false, drop ALL
 * and a RuntimeDefault (or Localhost) seccomp profile itself, so a container
 * added later cannot lean on a pod-level default by accident.
 */
function restrictedViolations(pod: PodSpec): string[] {
  const problems: string[] = [];
  const podContext = pod.securityContext ?? {};
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) problems.push('pod: host namespaces');
  if ((pod.volumes ?? []).some((volume) => 'hostPath' in volume)) {
    problems.push('pod: hostPath volume');
  }
  if (podContext.runAsNonRoot === false) problems.push('pod: runAsNonRoot is false');
  if (podContext.runAsUser === 0) problems.push('pod: runAsUser is 0');
  const podSeccomp = podContext.seccompProfile?.type;
  if (podSeccomp !== undefined && !['RuntimeDefault', 'Localhost'].includes(podSeccomp)) {
    problems.push(`pod: seccompProfile ${podSeccomp}`);
  }
  const containers = [
    ...pod.containers,
    ...(pod.initContainers ?? []),
    ...(pod.ephemeralContainers ?? []),
  ];
  for (const container of containers) {
    const context = container.securityContext ?? {};
    const where = `container ${container.name}`;
    if (context.runAsNonRoot !== true) problems.push(`${where}: runAsNonRoot is not true`);
    if (context.runAsUser === 0) problems.push(`${where}: runAsUser is 0`);
    if (context.allowPrivilegeEscalation !== false) {
      problems.push(`${where}: allowPrivilegeEscalation is not false`);
    }
    if (context.privileged) problems.push(`${where}: privileged`);
    if (!(context.capabilities?.drop ?? []).includes('ALL')) {
      problems.push(`${where}: capabilities do not drop ALL`);
    }
    const added = (context.capabilities?.add ?? []).filter((cap) => cap !== 'NET_BIND_SERVICE');
    if (added.length > 0) problems.push(`${where}: adds capabilities ${added.join(', ')}`);
    const seccomp = context.seccompProfile?.type;
    if (seccomp === undefined || !['RuntimeDefault', 'Localhost'].includes(seccomp)) {
      problems.push(`${where}: seccompProfile is not RuntimeDefault`);
    }
  }
  return problems;
}

/** Values nobody filled in, as production refuses them (see src/config/load-config.ts). */
const PLACEHOLDER = /change[\s_-]?(me|it|this)|placeholder|replace[\s_-]?me|<[^>]*>|\$\{[^}]*\}/i;

function secretPlaceholders(manifest: Manifest): string[] {
  if (manifest.document.kind !== 'Secret') return [];
  const values = {
    ...(isObject(manifest.document.stringData) ? manifest.document.stringData : {}),
    ...Object.fromEntries(
      Object.entries(isObject(manifest.document.data) ? manifest.document.data : {}).map(
        ([key, value]) => [key, Buffer.from(text(value), 'base64').toString('utf8')],
      ),
    ),
  };
  return Object.entries(values)
    .filter(([, value]) => PLACEHOLDER.test(text(value)))
    .map(([key]) => key);
}

describe('Kubernetes manifests', () => {
  const validate = kubernetesValidators();
  const all = manifests(yamlFiles('deploy', true));
  const applied = manifests(yamlFiles(APPLIED, false));
  const job = manifests(yamlFiles(MIGRATION_JOB, true));
  const workloads = [...applied, ...job].filter((manifest) => podTemplateOf(manifest.document));
  const ofKind = (kind: string) => applied.filter((manifest) => manifest.document.kind === kind);
  const containersOf = (manifest: Manifest): Container[] =>
    podTemplateOf(manifest.document)!.spec.containers;

  it('are each valid against the (strict) Kubernetes schema of their kind', () => {
    expect(all.length).toBeGreaterThanOrEqual(8);
    const invalid = all
      .map((manifest) => ({
        at: `${manifest.file}#${manifest.index}`,
        errors: validate(manifest.document),
      }))
      .filter((result) => result.errors !== '');
    expect(invalid).toEqual([]);
  });

  it('are refused by the schema with an unknown field, a wrong type or a missing field', () => {
    const deployment = clone(ofKind('Deployment')[0].document);
    const container = object(
      (
        object(object(object(deployment.spec, 'spec').template, 'template').spec, 'pod')
          .containers as Json[]
      )[0],
      'container',
    );
    container.securityContxt = { runAsNonRoot: true };
    expect(validate(deployment)).toContain('securityContxt');

    const replicas = clone(ofKind('Deployment')[0].document);
    object(replicas.spec, 'spec').replicas = 'two';
    expect(validate(replicas)).toMatch(/replicas/);

    const noSelector = clone(ofKind('Deployment')[0].document);
    delete object(noSelector.spec, 'spec').selector;
    expect(validate(noSelector)).toMatch(/selector/);

    expect(validate({ apiVersion: 'v1', kind: 'Pod' })).toBe('no schema for v1/Pod');
  });

  it('run every pod under the Pod Security Standard "restricted"', () => {
    expect(workloads.map(kindOf).sort()).toEqual([
      'apps/v1/Deployment',
      'apps/v1/Deployment',
      'batch/v1/Job',
    ]);
    for (const manifest of workloads) {
      expect({
        at: manifest.file,
        problems: restrictedViolations(podTemplateOf(manifest.document)!.spec),
      }).toEqual({
        at: manifest.file,
        problems: [],
      });
    }
  });

  it('the restricted check fails when any of its settings is taken away', () => {
    const removals: [string, (context: SecurityContext) => void][] = [
      ['runAsNonRoot', (context) => delete context.runAsNonRoot],
      ['allowPrivilegeEscalation', (context) => delete context.allowPrivilegeEscalation],
      ['capabilities', (context) => delete context.capabilities],
      ['seccompProfile', (context) => delete context.seccompProfile],
      ['seccompProfile', (context) => (context.seccompProfile = { type: 'Unconfined' })],
      ['capabilities', (context) => (context.capabilities = { drop: ['ALL'], add: ['SYS_ADMIN'] })],
    ];
    for (const manifest of workloads) {
      const unnoticed = removals
        .filter(([, remove]) => {
          const pod = clone(podTemplateOf(manifest.document)!.spec);
          remove(pod.containers[0].securityContext!);
          return restrictedViolations(pod).length === 0;
        })
        .map(([setting]) => setting);
      expect({ at: manifest.file, unnoticed }).toEqual({ at: manifest.file, unnoticed: [] });
      // A container added without its own securityContext is caught too.
      const pod = clone(podTemplateOf(manifest.document)!.spec);
      pod.initContainers = [{ name: 'added', image: 'busybox' }];
      expect(restrictedViolations(pod)).toContain('container added: runAsNonRoot is not true');
    }
  });

  it('apply no Secret: the example, with its placeholders, is kept out of the applied folders', () => {
    const secrets = [...applied, ...job].filter((manifest) => manifest.document.kind === 'Secret');
    expect(secrets.map((manifest) => manifest.file)).toEqual([]);
    expect([...applied, ...job].flatMap(secretPlaceholders)).toEqual([]);
    // The check sees the example's placeholders, and production refuses them.
    const [example] = manifests([EXAMPLE_SECRET]);
    expect(secretPlaceholders(example)).toEqual(
      expect.arrayContaining(['PLATFORM_VERIFY_TOKEN', 'ADMIN_PASSWORD', 'METRICS_TOKEN']),
    );
    const configMap = object(ofKind('ConfigMap')[0].document.data, 'data') as Record<
      string,
      string
    >;
    const stringData = object(example.document.stringData, 'stringData') as Record<string, string>;
    expect(() => loadConfig({ ...configMap, ...stringData })).toThrow(/placeholder/);
  });

  it('take their settings from the ConfigMap and the Secret the example names', () => {
    const configMapName = nameOf(ofKind('ConfigMap')[0]);
    const secretName = nameOf(manifests([EXAMPLE_SECRET])[0]);
    for (const manifest of workloads) {
      for (const container of containersOf(manifest)) {
        expect(container.envFrom).toEqual([
          { configMapRef: { name: configMapName } },
          { secretRef: { name: secretName } },
        ]);
      }
    }
    // METRICS_TOKEN comes from the Secret (production requires it) and guards the scraped port.
    const example = object(manifests([EXAMPLE_SECRET])[0].document.stringData, 'stringData');
    expect(Object.keys(example)).toContain('METRICS_TOKEN');
    for (const manifest of ofKind('Deployment')) {
      const template = podTemplateOf(manifest.document)!;
      const annotations = template.metadata?.annotations ?? {};
      expect(annotations['prometheus.io/scrape']).toBe('true');
      const ports = containersOf(manifest).flatMap((container) => container.ports ?? []);
      expect(ports.map((port) => String(port.containerPort))).toContain(
        annotations['prometheus.io/port'],
      );
    }
  });

  it('leave migrations to a Job of the same image, outside the applied folder', () => {
    for (const manifest of ofKind('Deployment')) {
      for (const container of containersOf(manifest)) {
        expect(container.env).toContainEqual({ name: 'DB_MIGRATIONS_RUN', value: 'false' });
      }
    }
    expect(ofKind('Job')).toEqual([]);
    expect(job.map(kindOf)).toEqual(['batch/v1/Job']);
    const [migrate] = containersOf(job[0]);
    expect(migrate.command).toEqual(['node', 'dist/migrate.js']);
    const images = new Set(workloads.flatMap(containersOf).map((container) => container.image));
    expect([...images]).toEqual([migrate.image]);
  });

  it('let the api pods leave the endpoints before SIGTERM drains them', () => {
    const [api] = ofKind('Deployment').filter((manifest) => nameOf(manifest).endsWith('-api'));
    const template = podTemplateOf(api.document)!;
    for (const container of template.spec.containers) {
      const preStop = container.lifecycle?.preStop;
      const seconds =
        preStop?.sleep?.seconds ??
        (preStop?.exec?.command?.[0] === 'sleep' ? Number(preStop.exec.command[1]) : NaN);
      expect(seconds).toBeGreaterThanOrEqual(3);
      expect(seconds).toBeLessThanOrEqual(15);
      expect(template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(
        seconds + SHUTDOWN_GRACE_S,
      );
    }
  });

  it('keep a PodDisruptionBudget for each Deployment', () => {
    const budgets = ofKind('PodDisruptionBudget').map(
      (manifest) =>
        object(
          object(object(manifest.document.spec, 'spec').selector, 'selector').matchLabels,
          'matchLabels',
        ) as Record<string, string>,
    );
    for (const manifest of ofKind('Deployment')) {
      const labels = podTemplateOf(manifest.document)!.metadata?.labels ?? {};
      const covering = budgets.filter((selector) =>
        Object.entries(selector).every(([key, value]) => labels[key] === value),
      );
      expect({ deployment: nameOf(manifest), budgets: covering.length }).toEqual({
        deployment: nameOf(manifest),
        budgets: 1,
      });
    }
  });

  it('route the Ingress to a port of the api Service, with TRUST_PROXY set for the controller', () => {
    const [ingress] = ofKind('Ingress');
    const rules = (object(ingress.document.spec, 'spec').rules ?? []) as Json[];
    const backends = rules.flatMap((rule) =>
      (object(object(rule, 'rule').http, 'http').paths as Json[]).map((path) =>
        object(object(object(path, 'path').backend, 'backend').service, 'backend.service'),
      ),
    );
    expect(backends.length).toBeGreaterThan(0);
    const services = new Map(
      ofKind('Service').map((service) => [
        nameOf(service),
        service.document.spec as unknown as {
          selector?: Record<string, string>;
          ports: { name?: string; port: number }[];
        },
      ]),
    );
    const [api] = ofKind('Deployment').filter((manifest) => nameOf(manifest).endsWith('-api'));
    const apiLabels = podTemplateOf(api.document)!.metadata?.labels ?? {};
    for (const backend of backends) {
      const service = services.get(text(backend.name));
      expect(service).toBeDefined();
      const port = object(backend.port, 'backend.service.port');
      expect(service!.ports.some((p) => p.name === port.name || p.port === port.number)).toBe(true);
      // The Service sends to the api pods (the HTTP API and the webhook), not the workers.
      expect(
        Object.entries(service!.selector ?? {}).every(([key, value]) => apiLabels[key] === value),
      ).toBe(true);
    }
    const data = object(ofKind('ConfigMap')[0].document.data, 'data');
    expect(text(data.TRUST_PROXY ?? '')).not.toBe('');
    // A value the service accepts (addresses or CIDR ranges).
    expect(
      loadConfig({ TRUST_PROXY: text(data.TRUST_PROXY) }).config.TRUST_PROXY.length,
    ).toBeGreaterThan(0);
  });
});
