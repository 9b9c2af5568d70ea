import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ConfigValidationError, loadConfig, type Environment } from './load-config.js';

const PRODUCTION_SECRETS: Environment = {
  NODE_ENV: 'production',
  PLATFORM_VERIFY_TOKEN: 'verify-token-123',
  PLATFORM_APP_SECRET: 'app-secret-1,app-secret-2',
  ADMIN_PASSWORD: 'velvet-Harbor-quince-93',
  JWT_SECRET: 'Qm9iJ3MgYmlnIHJhbmRvbSBrZXkgZm9yIEpXVHMhIDEyMzQ1Njc4',
  ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  METRICS_TOKEN: 'scrape-token-0123456789',
};

/** The secrets production checks for strength, with the fewest characters each takes. */
const CHECKED_SECRETS = {
  JWT_SECRET: 32,
  API_KEY: 16,
  METRICS_TOKEN: 16,
  AGENT_MODULE_TOKEN: 16,
  ADMIN_PASSWORD: 12,
} as const;

/** What operators generate secrets with (openssl rand, uuidgen, a language's crypto). */
const GENERATED: Record<string, () => string> = {
  'hex, 16 bytes': () => randomBytes(16).toString('hex'),
  'hex, 20 bytes': () => randomBytes(20).toString('hex'),
  'hex, 32 bytes': () => randomBytes(32).toString('hex'),
  'base64, 24 bytes': () => randomBytes(24).toString('base64'),
  'base64, 32 bytes': () => randomBytes(32).toString('base64'),
  'base64, 48 bytes': () => randomBytes(48).toString('base64'),
  'base64url, 32 bytes': () => randomBytes(32).toString('base64url'),
  UUIDv4: () => randomUUID(),
};

/** 32-byte keys as ENCRYPTION_KEY takes them. */
const KEY_FORMS = [
  () => randomBytes(32).toString('hex'),
  () => randomBytes(32).toString('base64'),
  () => randomBytes(32).toString('base64url'),
];

/** `pattern` repeated to `length` characters. */
const fit = (pattern: string, length: number): string =>
  pattern.repeat(Math.ceil(length / pattern.length)).slice(0, length);

/** Values nobody should deploy, `length` characters long. */
function weakValues(length: number): string[] {
  const padded = (word: string, padding: string): string =>
    (word + fit(padding, length)).slice(0, length);
  return [
    ...['a', 'Z', '0', '!', 'x'].map((character) => character.repeat(length)),
    ...[
      '0123456789',
      '0123456789abcdef',
      '0123456789ABCDEF',
      'abcdefghijklmnopqrstuvwxyz',
      'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
      'zyxwvutsrqponmlkjihgfedcba',
      '9876543210',
      'qwertyuiopasdfghjklzxcvbnm',
      'QWERTYUIOP',
      '1qaz2wsx3edc4rfv5tgb',
      '1q2w3e4r5t6y7u8i9o0p',
      'qwerty123456',
      'asdfghjkl;',
      '!@#$%^&*()',
      'ab',
      'abc',
      'deadbeef',
      'password',
      'Password1!',
      'p4ssw0rd',
      'P@ssw0rd',
      'admin',
      'admin123',
      'secret',
      'secretkey',
      'jwtsecret',
      'SuperSecret',
      'letmein',
      'iloveyou',
      'qwerty',
      'monkey',
      'dragon',
      'senha',
      'Summer2024!',
      'Welcome1234!',
      'changeme',
    ].map((pattern) => fit(pattern, length)),
    padded('password', '1234567890'),
    padded('Password', '0123456789'),
    padded('admin', '1234567890'),
    padded('secret', '!'),
    padded('Welcome', '1'),
  ];
}

function problemsOf(env: Environment): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigValidationError) return error.problems;
    throw error;
  }
  return [];
}

/** The values (by variable) that production started with although it should not have. */
function acceptedIn(name: string, values: string[], others: Environment = {}): string[] {
  return values.filter(
    (value) =>
      !problemsOf({ ...PRODUCTION_SECRETS, ...others, [name]: value }).some((line) =>
        line.startsWith(`${name} `),
      ),
  );
}

describe('loadConfig', () => {
  it('applies the contract defaults', () => {
    const { config } = loadConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PLATFORM_API_URL: 'https://graph.facebook.com',
      PLATFORM_API_VERSION: 'v25.0',
      PLATFORM_TIMEOUT_MS: 10000,
      AGENT_TIMEOUT_MS: 30000,
      MESSAGE_BUFFER_DELAY: 8,
      MESSAGE_BUFFER_MAX_WAIT: 60,
      ADMIN_USERNAME: 'admin',
      JWT_EXPIRES_IN: 3600,
      SERVICE_WINDOW_ENFORCE: true,
      READINESS_NOT_READY_STATUS: 503,
      AGENT_TYPING_INDICATOR: true,
      PLATFORM_SEND_RATE: 80,
      LOG_LEVEL: 'info',
      APP_ROLE: 'all',
      DB_MIGRATIONS_RUN: true,
    });
    expect(config.AGENT_MODULE_URL).toBeUndefined();
    expect(config.API_KEY).toBeUndefined();
  });

  it('falls back for every secret in development, with one warning each', () => {
    const { config, warnings } = loadConfig({ NODE_ENV: 'development' });
    expect(warnings).toHaveLength(5);
    for (const name of [
      'PLATFORM_VERIFY_TOKEN',
      'PLATFORM_APP_SECRET',
      'ADMIN_PASSWORD',
      'JWT_SECRET',
      'ENCRYPTION_KEY',
    ]) {
      expect(warnings.some((warning) => warning.startsWith(`${name} is not set`))).toBe(true);
    }
    expect(config.JWT_SECRET.length).toBeGreaterThanOrEqual(32);
  });

  it('stops production with one line naming each missing secret', () => {
    const problems = problemsOf({ NODE_ENV: 'production' });
    expect(problems).toEqual([
      'PLATFORM_VERIFY_TOKEN is required when NODE_ENV=production',
      'PLATFORM_APP_SECRET is required when NODE_ENV=production',
      'ADMIN_PASSWORD is required when NODE_ENV=production',
      'JWT_SECRET is required when NODE_ENV=production',
      'ENCRYPTION_KEY is required when NODE_ENV=production',
      'METRICS_TOKEN is required when NODE_ENV=production (it guards GET /metrics)',
    ]);
  });

  it.each([
    [
      { ADMIN_PASSWORD: 'dev-admin-password' },
      'ADMIN_PASSWORD is a development fallback: set a secret of your own',
    ],
    [
      { PLATFORM_APP_SECRET: 'app-secret-1,dev-app-secret-change-me' },
      'PLATFORM_APP_SECRET is a development fallback: set a secret of your own',
    ],
    [
      { PLATFORM_VERIFY_TOKEN: 'CHANGE_ME' },
      'PLATFORM_VERIFY_TOKEN holds a placeholder (such as CHANGE_ME): set the real value',
    ],
    [
      { JWT_SECRET: 'CHANGE_ME_AT_LEAST_32_CHARACTERS_LONG' },
      'JWT_SECRET holds a placeholder (such as CHANGE_ME): set the real value',
    ],
    [
      { DATABASE_URL: 'postgres://connector:CHANGE_ME@postgres:5432/connector' },
      'DATABASE_URL holds a placeholder (such as CHANGE_ME): set the real value',
    ],
    [
      { ADMIN_PASSWORD: 'only-11-chr' },
      'ADMIN_PASSWORD must be at least 12 characters when NODE_ENV=production',
    ],
    [
      { JWT_SECRET: 'j'.repeat(40) },
      'JWT_SECRET is too easy to guess (a repeated character, a sequence, a common word, or too short for the characters it uses): it needs about 80 random bits when NODE_ENV=production (openssl rand -base64 48)',
    ],
    [
      { ADMIN_PASSWORD: 'Password1234' },
      'ADMIN_PASSWORD is too easy to guess (a repeated character, a sequence, a common word, or too short for the characters it uses): it needs about 40 random bits when NODE_ENV=production (several unrelated words, or one from a password manager)',
    ],
    [
      { TRUST_PROXY: '0.0.0.0/0' },
      'TRUST_PROXY trusts every address, so any client could claim any address in X-Forwarded-For: name only your proxies (e.g. 10.0.0.0/8)',
    ],
  ])('refuses %j in production', (override, line) => {
    expect(problemsOf({ ...PRODUCTION_SECRETS, ...override })).toEqual([line]);
  });

  it.each(Object.keys(GENERATED))(
    'accepts 5,000 freshly generated secrets of each kind for every checked secret: %s',
    (kind) => {
      const generate = GENERATED[kind];
      const refused: Array<{ problems: string[]; env: Environment }> = [];
      for (let i = 0; i < 5000; i++) {
        // A key's own kind when it has 32 bytes, else each key form in turn.
        const key = kind.endsWith('32 bytes') ? generate : KEY_FORMS[i % KEY_FORMS.length];
        const env: Environment = {
          ...PRODUCTION_SECRETS,
          PLATFORM_VERIFY_TOKEN: generate(),
          PLATFORM_APP_SECRET: `${generate()},${generate()}`,
          ADMIN_PASSWORD: generate(),
          JWT_SECRET: generate(),
          ENCRYPTION_KEY: key(),
          ENCRYPTION_PREVIOUS_KEYS: `${key()},${key()}`,
          API_KEY: generate(),
          METRICS_TOKEN: generate(),
          AGENT_MODULE_TOKEN: generate(),
        };
        const problems = problemsOf(env);
        if (problems.length > 0) refused.push({ problems, env });
      }
      expect(refused).toEqual([]);
    },
    60_000,
  );

  it.each(Object.entries(CHECKED_SECRETS))(
    'refuses repeated characters, sequences, keyboard runs and common words, repeated or padded, as %s',
    (name, length) => {
      const sizes = name === 'JWT_SECRET' ? [32, 44, 64] : [length];
      expect(acceptedIn(name, sizes.flatMap(weakValues))).toEqual([]);
    },
  );

  it('accepts random values that happen to hold a placeholder word inside them', () => {
    // Generated keys seen refused for the "dUmMY" inside them (1 in 40,000).
    const random = [
      'g_eaYz68yd7n7Kdplgp_7ZFRcFBmJVCr_L5WHC3p0kg,Xt3nJsQxfyisVqzt2eIVOpDX2g8Qcu02qiDUmMYNvMA',
      'Q2fk9ZchangemeT4x0Lq8vWbYplaceholderR7mN3dKs1JeHu6',
    ];
    expect(acceptedIn('ENCRYPTION_PREVIOUS_KEYS', random.slice(0, 1))).toEqual(random.slice(0, 1));
    for (const name of ['PLATFORM_APP_SECRET', 'PLATFORM_VERIFY_TOKEN', 'JWT_SECRET']) {
      expect([name, acceptedIn(name, random)]).toEqual([name, random]);
    }
  });

  it("refuses the development fallbacks, the examples' placeholders and short values for every secret", () => {
    const fallbacks = [
      'dev-verify-token-change-me',
      'dev-app-secret-change-me',
      'dev-admin-password',
      'dev-jwt-secret-change-me-0123456789abcdef',
      createHash('sha256').update('messaging-connector-dev-key').digest('hex'),
    ];
    // deploy/examples/secret.example.yaml, the README and what people write instead.
    const placeholders = [
      'CHANGE_ME',
      'CHANGE_ME_AT_LEAST_32_RANDOM_CHARACTERS',
      'change-me-change-me-change-me-change-me',
      '<your-secret-of-32-characters-or-more>',
      '${JWT_SECRET_FROM_THE_VAULT_GOES_HERE_123}',
      'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
      'replace-me-with-a-real-secret-value-0001',
      'your-secret-here-your-secret-here-0001',
      'dummy-value-for-the-secret-0123456789abc',
    ];
    for (const name of [
      'PLATFORM_VERIFY_TOKEN',
      'PLATFORM_APP_SECRET',
      'ENCRYPTION_KEY',
      'ENCRYPTION_PREVIOUS_KEYS',
      ...Object.keys(CHECKED_SECRETS),
    ]) {
      expect([name, acceptedIn(name, [...fallbacks, ...placeholders])]).toEqual([name, []]);
    }
    const url = 'postgres://connector:CHANGE_ME@postgres:5432/connector';
    expect(acceptedIn('DATABASE_URL', [url])).toEqual([]);
    expect(acceptedIn('REDIS_URL', ['redis://:CHANGE_ME@redis:6379'])).toEqual([]);
    // Random, but shorter than each needs.
    for (const name of Object.keys(CHECKED_SECRETS)) {
      const short = [randomBytes(4).toString('hex'), randomBytes(5).toString('hex').slice(0, 9)];
      expect([name, acceptedIn(name, short)]).toEqual([name, []]);
    }
  });

  it('refuses weak encryption keys, as text and as the bytes they decode to', () => {
    const keys = [
      'ab'.repeat(32),
      '0'.repeat(64),
      '0123456789abcdef'.repeat(4),
      'deadbeef'.repeat(8),
      Buffer.alloc(32, 7).toString('base64'),
      Buffer.from('passwordpasswordpasswordpassword').toString('base64'),
      Buffer.from(fit('0123456789', 32)).toString('hex'),
    ];
    expect(acceptedIn('ENCRYPTION_KEY', keys)).toEqual([]);
    const good = randomBytes(32).toString('hex');
    expect(
      acceptedIn(
        'ENCRYPTION_PREVIOUS_KEYS',
        keys.map((key) => `${good},${key}`),
      ),
    ).toEqual([]);
  });

  it.each([
    '0.0.0.0/0',
    '::/0',
    '10.0.0.0/8,0.0.0.0/0',
    '0.0.0.0/1,128.0.0.0/1',
    '::ffff:0:0/96',
    '::ffff:0.0.0.0/96',
    '::/1,8000::/1',
  ])('refuses TRUST_PROXY=%s (every address) in production, and warns in development', (list) => {
    expect(problemsOf({ ...PRODUCTION_SECRETS, TRUST_PROXY: list })).toEqual([
      'TRUST_PROXY trusts every address, so any client could claim any address in X-Forwarded-For: name only your proxies (e.g. 10.0.0.0/8)',
    ]);
    expect(loadConfig({ TRUST_PROXY: list }).warnings).toContain(
      'TRUST_PROXY trusts every address, so any client could claim any address in X-Forwarded-For: name only your proxies (e.g. 10.0.0.0/8)',
    );
  });

  it('accepts proxies that are not everyone in production', () => {
    for (const list of [
      '10.0.0.0/8,fd00::/8',
      '127.0.0.1',
      '192.168.0.0/16, 172.16.0.0/12',
      '0.0.0.0/1',
    ]) {
      expect([list, problemsOf({ ...PRODUCTION_SECRETS, TRUST_PROXY: list })]).toEqual([list, []]);
    }
  });

  it("derives the API key limit from the number's send rate unless it is set", () => {
    expect(loadConfig({}).config).toMatchObject({ apiKeyRateLimit: 160, apiKeyRateBurst: 800 });
    expect(loadConfig({ PLATFORM_SEND_RATE: '20' }).config).toMatchObject({
      apiKeyRateLimit: 40,
      apiKeyRateBurst: 200,
    });
    expect(loadConfig({ API_KEY_RATE_LIMIT: '5' }).config).toMatchObject({
      apiKeyRateLimit: 5,
      apiKeyRateBurst: 25,
    });
    expect(loadConfig({ API_KEY_RATE_LIMIT: '5', API_KEY_RATE_BURST: '7' }).config).toMatchObject({
      apiKeyRateLimit: 5,
      apiKeyRateBurst: 7,
    });
  });

  it('accepts development fallbacks outside production', () => {
    expect(problemsOf({ NODE_ENV: 'development', ADMIN_PASSWORD: 'dev-admin-password' })).toEqual(
      [],
    );
  });

  it('accepts a complete production configuration without warnings', () => {
    const { config, warnings } = loadConfig(PRODUCTION_SECRETS);
    expect(warnings).toEqual([]);
    expect(config.PLATFORM_APP_SECRET).toEqual(['app-secret-1', 'app-secret-2']);
    expect(config.isProduction).toBe(true);
  });

  it.each([
    [{ ENCRYPTION_KEY: 'short' }, 'ENCRYPTION_KEY must be 32 bytes as 64 hex characters or base64'],
    [
      { ENCRYPTION_KEY: 'zz'.repeat(32) },
      'ENCRYPTION_KEY must be 32 bytes as 64 hex characters or base64',
    ],
    [{ JWT_SECRET: 'too-short' }, 'JWT_SECRET must be at least 32 characters'],
    [{ ADMIN_PASSWORD: 'short' }, 'ADMIN_PASSWORD must be at least 8 characters'],
    [{ PORT: 'http' }, 'PORT must be an integer from 0 to 65535'],
    [{ PORT: '70000' }, 'PORT must be an integer from 0 to 65535'],
    [{ APP_ROLE: 'both' }, 'APP_ROLE must be one of all, api, worker'],
    [
      { DATABASE_URL: 'mysql://x' },
      'DATABASE_URL must be a URL starting with postgres:// or postgresql://',
    ],
    [
      { REDIS_URL: 'localhost:6379' },
      'REDIS_URL must be a URL starting with redis:// or rediss://',
    ],
    [{ PLATFORM_API_VERSION: '25' }, 'PLATFORM_API_VERSION must look like v25.0'],
    [
      { MESSAGE_BUFFER_DELAY: 'soon' },
      'MESSAGE_BUFFER_DELAY must be a number of seconds from 0 to 3600',
    ],
    [{ SERVICE_WINDOW_ENFORCE: 'maybe' }, 'SERVICE_WINDOW_ENFORCE must be true or false'],
    [
      { READINESS_NOT_READY_STATUS: '99' },
      'READINESS_NOT_READY_STATUS must be an HTTP status from 200 to 599',
    ],
    [{ API_KEY: 'short' }, 'API_KEY must be at least 16 characters when set'],
    [
      { LOG_LEVEL: 'loud' },
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    ],
    [
      { AGENT_MODULE_URL: 'ftp://agent' },
      'AGENT_MODULE_URL must be a URL starting with http:// or https://',
    ],
    [
      { PLATFORM_SEND_RATE: '0' },
      'PLATFORM_SEND_RATE must be a number of messages per second above 0',
    ],
    [
      { TRUST_PROXY: 'true' },
      'TRUST_PROXY must list the proxies as addresses or CIDR ranges, comma-separated (e.g. 10.0.0.0/8), or be empty',
    ],
    [
      { TRUST_PROXY: '10.0.0.0/33' },
      'TRUST_PROXY must list the proxies as addresses or CIDR ranges, comma-separated (e.g. 10.0.0.0/8), or be empty',
    ],
  ])('refuses %j with a clear line', (override, line) => {
    expect(problemsOf({ ...PRODUCTION_SECRETS, ...override })).toEqual([line]);
  });

  it('reports every invalid variable at once, one line each', () => {
    const problems = problemsOf({
      ...PRODUCTION_SECRETS,
      PORT: 'x',
      JWT_SECRET: 'y',
      ENCRYPTION_KEY: 'z',
    });
    expect(problems).toHaveLength(3);
  });

  it('accepts a base64 encryption key and decimal buffer delays', () => {
    const { config } = loadConfig({
      ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      MESSAGE_BUFFER_DELAY: '0.5',
      MESSAGE_BUFFER_MAX_WAIT: '2.5',
    });
    expect(config.MESSAGE_BUFFER_DELAY).toBe(0.5);
    expect(config.MESSAGE_BUFFER_MAX_WAIT).toBe(2.5);
  });

  it('refuses a max wait shorter than the buffer delay', () => {
    expect(problemsOf({ MESSAGE_BUFFER_DELAY: '10', MESSAGE_BUFFER_MAX_WAIT: '5' })).toEqual([
      'MESSAGE_BUFFER_MAX_WAIT must not be less than MESSAGE_BUFFER_DELAY',
    ]);
  });

  it('reads TRUST_PROXY as a list of addresses and ranges', () => {
    expect(
      loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,fd00::/8' }).config.TRUST_PROXY,
    ).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);
    expect(loadConfig({ TRUST_PROXY: 'false' }).config.TRUST_PROXY).toEqual([]);
    expect(loadConfig({}).config.TRUST_PROXY).toEqual([]);
  });

  it('treats empty values as unset', () => {
    const { config } = loadConfig({ PORT: '', API_KEY: '  ' });
    expect(config.PORT).toBe(3000);
    expect(config.API_KEY).toBeUndefined();
  });
});
