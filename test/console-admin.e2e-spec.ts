import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, seriousViolations } from './support/browser.js';
import { EventReceiver, signatureValid } from './support/event-receiver.js';
import { simulateMessage, VALID_TOKEN, type WebhookTarget } from './support/fake-platform.js';
import {
  ADMIN_PASSWORD,
  APP_SECRET,
  adminToken,
  createApiKey,
  http,
  useTestService,
  waitFor,
  type TestApp,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352288501';
const OTHER_NUMBER_ID = '106540352288502';
const PASSWORD = 'correct horse battery staple';
const SCREENSHOTS = new URL('../docs/console/', import.meta.url);
/** A generous bound for what a busy machine's browser shows (the bench measures how fast). */
const SHOWN_MS = 30_000;
const BROWSER_TEST_MS = 240_000;

const curl = promisify(execFile);

/** The HTTP status curl gets for GET `url` with `key` as the bearer token. */
async function curlStatus(url: string, key: string): Promise<number> {
  const { stdout } = await curl('curl', [
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    '-H',
    `Authorization: Bearer ${key}`,
    url,
  ]);
  return Number(stdout);
}

describe('The console’s admin pages in a browser: instances, accounts, API keys, events, failed turns, overview', () => {
  const context = useTestService({
    agent: true,
    env: {
      MESSAGE_BUFFER_DELAY: '0.2',
      MESSAGE_BUFFER_MAX_WAIT: '1',
      AGENT_TYPING_INDICATOR: 'false',
      EVENT_POLL_MS: '50',
      // A failed delivery waits for its "Retry now", not for the schedule.
      EVENT_RETRY_SCHEDULE_S: '3600',
    },
  });
  let service: TestApp;
  let browser: Browser;
  let receiver: EventReceiver;
  const contexts: BrowserContext[] = [];

  /** A new browser session (its own cookies), in `locale`, at `width` pixels; dialogs accepted. */
  const newPage = async (width = 1280, locale = 'en-US'): Promise<Page> => {
    const browserContext = await browser.newContext({
      baseURL: service.url,
      locale,
      viewport: { width, height: 800 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    contexts.push(browserContext);
    const page = await browserContext.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    return page;
  };
  const logIn = async (page: Page, username: string, password: string, path = '/console/') => {
    await page.goto(path);
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('button', { name: 'Log out' }).waitFor();
  };
  const sections = (page: Page) => page.getByRole('navigation', { name: 'Sections' });
  const go = async (page: Page, section: string) => {
    await sections(page).getByRole('link', { name: section, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: section }).waitFor({ timeout: SHOWN_MS });
  };
  /** Creates an instance through the console's form; resolves on its page. */
  const createInstance = async (page: Page, name: string, phoneNumberId: string) => {
    await go(page, 'Instances');
    await page.getByRole('button', { name: 'New instance' }).click();
    const form = page.getByRole('form', { name: 'New instance' });
    await form.getByLabel('Name').fill(name);
    await form.getByLabel('Phone number id').fill(phoneNumberId);
    await form.getByLabel('Business account id').fill('102290129340398');
    await form.getByLabel('Access token').fill(VALID_TOKEN);
    await form.getByRole('button', { name: 'Check the token and create' }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor({ timeout: SHOWN_MS });
  };
  const instanceIdByName = async (name: string): Promise<string> => {
    const [row] = await context.db.query<{ id: string }>(
      'SELECT id FROM instances WHERE name = $1',
      [name],
    );
    return row.id;
  };

  beforeAll(async () => {
    service = context.service;
    browser = await launchBrowser();
    receiver = await EventReceiver.start();
    await mkdir(SCREENSHOTS, { recursive: true });
  });

  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.stop();
  }, BROWSER_TEST_MS);

  it(
    'instances: created with the token check, the webhook URL and verify token to copy, edited, deactivated; a refused token is flagged',
    async () => {
      const page = await newPage();
      // Opened by its address (a reload, a bookmark): the page is served, the login first.
      await logIn(page, 'admin', ADMIN_PASSWORD, '/console/instances');
      await page.getByRole('heading', { level: 1, name: 'Instances' }).waitFor();

      await createInstance(page, 'Main store', PHONE_NUMBER_ID);
      const mainId = await instanceIdByName('Main store');
      const admin = await adminToken(service.url);
      const detail = await http<{ webhook_verify_token: string; is_active: boolean }>(
        service.url,
        'GET',
        `/admin/instances/${mainId}`,
        { token: admin },
      );
      // The two values the platform's app settings need, each with its copy button.
      await page.getByText(`${service.url}/webhooks/messenger`, { exact: true }).waitFor();
      await page.getByText(detail.body.webhook_verify_token, { exact: true }).waitFor();
      const webhook = page.getByRole('region', { name: 'Webhook' });
      await webhook.getByRole('button', { name: 'Copy' }).last().click();
      expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(
        detail.body.webhook_verify_token,
      );

      // A token the platform refuses is not saved: the form says why.
      await go(page, 'Instances');
      await page.getByRole('button', { name: 'New instance' }).click();
      const form = page.getByRole('form', { name: 'New instance' });
      await form.getByLabel('Name').fill('Refused');
      await form.getByLabel('Phone number id').fill('106540352288599');
      await form.getByLabel('Business account id').fill('102290129340398');
      await form.getByLabel('Access token').fill('not-a-valid-token');
      await form.getByRole('button', { name: 'Check the token and create' }).click();
      await form.getByRole('alert').waitFor({ timeout: SHOWN_MS });
      expect(
        await context.db.query('SELECT 1 FROM instances WHERE name = $1', ['Refused']),
      ).toEqual([]);

      // Edit the name and the agent's settings.
      await page.getByRole('link', { name: 'Main store' }).click();
      const edit = page.getByRole('form', { name: 'Edit' });
      await edit.getByLabel('Name').fill('Main store (SP)');
      await edit.getByLabel('Buffer delay (s)').fill('2.5');
      await edit.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('heading', { level: 1, name: 'Main store (SP)' }).waitFor();
      const edited = await http<{ name: string; agent: { buffer_delay_s: number } }>(
        service.url,
        'GET',
        `/admin/instances/${mainId}`,
        { token: admin },
      );
      expect(edited.body).toMatchObject({
        name: 'Main store (SP)',
        agent: { buffer_delay_s: 2.5 },
      });

      await page.getByRole('button', { name: 'Deactivate' }).click();
      await page.getByRole('button', { name: 'Activate (checks the token)' }).waitFor();
      expect(
        (
          await http<{ is_active: boolean }>(service.url, 'GET', `/admin/instances/${mainId}`, {
            token: admin,
          })
        ).body.is_active,
      ).toBe(false);
      await page.getByRole('button', { name: 'Activate (checks the token)' }).click();
      await page.getByRole('button', { name: 'Deactivate' }).waitFor();

      // The platform refused the other number's token: the list says so.
      await createInstance(page, 'Other store', OTHER_NUMBER_ID);
      await context.db.query(
        `UPDATE instances SET token_rejected_at = now() - interval '1 hour' WHERE name = 'Other store'`,
      );
      await go(page, 'Instances');
      const row = page.getByRole('row', { name: /Other store/ });
      await row.getByRole('alert').filter({ hasText: 'refused this number' }).waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: new URL('instances.png', SCREENSHOTS).pathname });
    },
    BROWSER_TEST_MS,
  );

  it(
    'accounts: an operator created in the console reaches only its instance’s inbox, no admin page and no admin route',
    async () => {
      const page = await newPage();
      await logIn(page, 'admin', ADMIN_PASSWORD);
      await go(page, 'Accounts');
      const form = page.getByRole('form', { name: 'New account' });
      await form.getByLabel('Username').fill('bia');
      await form.getByLabel('Display name').fill('Bia Lima');
      await form.getByLabel('Password (12 characters or more)').fill(PASSWORD);
      await form.getByLabel('Main store (SP)').check();
      await form.getByRole('button', { name: 'Create' }).click();
      await page.getByText('@bia').waitFor({ timeout: SHOWN_MS });
      expect(await seriousViolations(page)).toEqual([]);

      const operator = await newPage();
      await logIn(operator, 'bia', PASSWORD);
      await operator.getByRole('navigation', { name: 'Conversations' }).waitFor();
      // No admin sections, one instance, and an admin page answers that it is for admins.
      await expect(sections(operator).count()).resolves.toBe(0);
      const options = await operator
        .getByLabel('Number', { exact: true })
        .locator('option')
        .allTextContents();
      expect(options).toEqual([expect.stringMatching(/^Main store \(SP\)/)]);
      await operator.goto('/console/instances');
      await operator.getByRole('heading', { name: 'This page is for admins' }).waitFor();
      const request = operator.context().request;
      for (const path of [
        '/admin/instances',
        '/admin/api-keys',
        '/admin/overview',
        '/admin/turns',
      ]) {
        expect((await request.get(path)).status()).toBe(403);
      }
      const otherId = await instanceIdByName('Other store');
      expect((await request.get(`/contacts?instance_id=${otherId}`)).status()).toBe(403);

      // A new password set in the console ends the operator's sessions; the new one logs in.
      await page.getByText('@bia').click();
      const reset = page.getByRole('form', { name: 'New password for bia' });
      await reset.getByLabel('New password').fill('another horse battery staple');
      await reset.getByRole('button', { name: 'Set the password' }).click();
      const mainStore = await instanceIdByName('Main store (SP)');
      await waitFor(
        async () => (await request.get(`/contacts?instance_id=${mainStore}`)).status() === 401,
      );
      const again = await http<{ token: string }>(service.url, 'POST', '/admin/auth/login', {
        body: { username: 'bia', password: 'another horse battery staple' },
      });
      expect(again.status).toBe(200);
      const asBia = async () =>
        (
          await http(service.url, 'GET', `/contacts?instance_id=${mainStore}`, {
            token: again.body.token,
          })
        ).status;
      expect(await asBia()).toBe(200);

      // Disabled in the console: the operator's session ends at once.
      await page.getByText('@bia').click();
      const edit = page.getByRole('form', { name: 'Edit bia' });
      await edit.getByLabel('Disabled').check();
      await edit.getByRole('button', { name: 'Save' }).click();
      await page.getByText('@bia').locator('..').getByText('Disabled').waitFor();
      await waitFor(async () => (await asBia()) === 401);
    },
    BROWSER_TEST_MS,
  );

  it(
    'API keys: shown once with a copy button, the key works with curl, and stops once revoked',
    async () => {
      const page = await newPage();
      await logIn(page, 'admin', ADMIN_PASSWORD);
      await go(page, 'API keys');
      const form = page.getByRole('form', { name: 'New API key' });
      await form.getByLabel('Name').fill('crm');
      await form.getByLabel('Instance').selectOption({ label: 'Main store (SP)' });
      await form.getByRole('button', { name: 'Create' }).click();
      const once = page.getByRole('alert', { name: 'The API key crm:' });
      const key = (await once.locator('code.secret').textContent({ timeout: SHOWN_MS }))!;
      expect(key).toMatch(/^mck_/);
      await once.getByRole('button', { name: 'Copy' }).click();
      expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(key);
      expect(await seriousViolations(page)).toEqual([]);

      const mainId = await instanceIdByName('Main store (SP)');
      const contactsUrl = `${service.url}/contacts?instance_id=${mainId}`;
      expect(await curlStatus(contactsUrl, key)).toBe(200);

      // Once stored, the page shows it nowhere again: only its prefix.
      await once.getByRole('button', { name: 'I stored it' }).click();
      const row = page.getByRole('row', { name: /crm/ });
      await row.waitFor();
      expect(await page.content()).not.toContain(key);
      await row.getByRole('button', { name: 'Revoke crm' }).click();
      await row.waitFor({ state: 'detached', timeout: SHOWN_MS });
      expect(await curlStatus(contactsUrl, key)).toBe(401);
    },
    BROWSER_TEST_MS,
  );

  it(
    'events: a subscription’s secret is shown once, its test ping reaches the receiver signed with it, and is listed as delivered',
    async () => {
      const page = await newPage();
      await logIn(page, 'admin', ADMIN_PASSWORD);
      await go(page, 'Events');
      const form = page.getByRole('form', { name: 'New subscription' });
      await form.getByLabel('URL').fill(receiver.url);
      await form.getByLabel('message.sent').check();
      await form.getByRole('button', { name: 'Subscribe' }).click();
      const once = page.getByRole('alert', { name: /The signing secret of/ });
      const secret = (await once.locator('code.secret').textContent({ timeout: SHOWN_MS }))!;
      expect(secret).toMatch(/^whsec_/);
      await once.getByRole('button', { name: 'I stored it' }).click();
      await page.getByRole('heading', { level: 1, name: 'Event subscription' }).waitFor();
      expect(await page.content()).not.toContain(secret);
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByRole('button', { name: 'Send a test ping' }).click();
      await waitFor(() => receiver.ofType('ping').length === 1, SHOWN_MS);
      expect(signatureValid(secret, receiver.ofType('ping')[0])).toBe(true);
      const deliveries = page.getByRole('region', { name: 'Deliveries' });
      await deliveries.getByLabel('State').selectOption('delivered');
      await deliveries
        .getByRole('row', { name: /ping/ })
        .getByText('Delivered')
        .waitFor({ timeout: SHOWN_MS });

      await page.getByRole('button', { name: 'Disable', exact: true }).click();
      await page.getByRole('button', { name: 'Enable', exact: true }).waitFor();
      const admin = await adminToken(service.url);
      const subscriptionNow = async () =>
        (
          await http<Array<{ enabled: boolean; description: string | null }>>(
            service.url,
            'GET',
            '/admin/event-subscriptions',
            { token: admin },
          )
        ).body[0];
      expect((await subscriptionNow()).enabled).toBe(false);
      await page.getByRole('button', { name: 'Enable', exact: true }).click();
      await page.getByRole('button', { name: 'Disable', exact: true }).waitFor();

      // Edit: the description.
      const edit = page.getByRole('form', { name: 'Edit' });
      await edit.getByLabel('Description').fill('CRM inbox');
      await edit.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
      expect((await subscriptionNow()).description).toBe('CRM inbox');

      // Rotate: a new secret, shown once, signs from now on.
      await page.getByRole('button', { name: 'Rotate the secret' }).click();
      const rotated = page.getByRole('alert', { name: 'The new signing secret:' });
      const newSecret = (await rotated.locator('code.secret').textContent({ timeout: SHOWN_MS }))!;
      expect(newSecret).toMatch(/^whsec_/);
      expect(newSecret).not.toBe(secret);
      await rotated.getByRole('button', { name: 'I stored it' }).click();
      expect(await page.content()).not.toContain(newSecret);

      // A receiver that fails: the delivery waits, and "Retry now" sends it again at once.
      receiver.answer(() => ({ status: 500 }));
      await page.getByRole('button', { name: 'Send a test ping' }).click();
      await waitFor(() => receiver.ofType('ping').length === 2, SHOWN_MS);
      receiver.answer(() => ({ status: 204 }));
      await deliveries.getByLabel('State').selectOption('pending');
      const waiting = deliveries.getByRole('row', { name: /ping/ });
      await waiting.getByText('500').waitFor({ timeout: SHOWN_MS });
      await waiting.getByRole('button', { name: 'Retry now' }).click();
      await waitFor(() => receiver.ofType('ping').length === 3, SHOWN_MS);
      expect(signatureValid(newSecret, receiver.ofType('ping')[2])).toBe(true);
      await deliveries.getByLabel('State').selectOption('delivered');
      // (the delivery is recorded just after the receiver answered: read again until it is)
      await waitFor(async () => {
        await deliveries.getByRole('button', { name: 'Refresh' }).click();
        return (await deliveries.getByRole('row', { name: /ping/ }).count()) === 2;
      }, SHOWN_MS);

      // Replay a time range: the page says how many events went again.
      const replay = page.getByRole('form', { name: 'Replay events' });
      const hourAgo = new Date(Date.now() - 3_600_000);
      const local = new Date(hourAgo.getTime() - hourAgo.getTimezoneOffset() * 60_000)
        .toISOString()
        .slice(0, 16);
      await replay.getByLabel('Since').fill(local);
      await replay.getByRole('button', { name: 'Send again' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: /\d+ events? queued again/ })
        .waitFor({ timeout: SHOWN_MS });
    },
    BROWSER_TEST_MS,
  );

  it(
    'failed turns: listed with the agent’s error, and retried from the console',
    async () => {
      const from = '5511988880001';
      // An inbox open on the number sees the turn fail, and the retry, as they happen.
      const inbox = await newPage();
      await logIn(inbox, 'admin', ADMIN_PASSWORD);
      await inbox
        .getByLabel('Number', { exact: true })
        .selectOption(await instanceIdByName('Main store (SP)'));
      const failure = inbox.getByRole('note').filter({ hasText: 'The agent could not answer' });

      context.agent.answerNext({ status: 400, body: { error: 'cannot parse' } });
      const target: WebhookTarget = {
        url: `${service.url}/webhooks/messenger`,
        appSecret: APP_SECRET,
        phoneNumberId: PHONE_NUMBER_ID,
      };
      const written = await simulateMessage(target, { waId: from, name: 'Carla' }, 'help me');
      expect(written.status).toBe(200);
      await inbox
        .getByRole('navigation', { name: 'Conversations' })
        .getByRole('button', { name: /Carla/ })
        .click({ timeout: SHOWN_MS });
      // An admin reads why, and the way to the turn; the conversation itself does not carry
      // the error (it may name internal addresses): an API key or an operator is not given it.
      await failure.getByText('agent answered HTTP 400').waitFor({ timeout: SHOWN_MS });
      await expect(failure.getByRole('link', { name: 'See the turn' }).count()).resolves.toBe(1);
      expect(await seriousViolations(inbox)).toEqual([]);
      const key = await createApiKey(
        service.url,
        await adminToken(service.url),
        await instanceIdByName('Main store (SP)'),
        'turn-errors',
      );
      const conversation = await http(service.url, 'GET', `/contacts/${from}/messages`, {
        token: key,
      });
      expect(conversation.body).toMatchObject({ data: [{ turn_status: 'failed' }] });
      expect(conversation.text).not.toContain('HTTP 400');

      const page = await newPage();
      await logIn(page, 'admin', ADMIN_PASSWORD);
      await go(page, 'Overview');
      await page
        .getByRole('region', { name: 'Failed turns' })
        .getByText('1', { exact: true })
        .waitFor({ timeout: SHOWN_MS });
      expect(await seriousViolations(page)).toEqual([]);

      await go(page, 'Failed turns');
      const row = page.getByRole('row', { name: /Carla/ });
      await row.getByText(/400/).waitFor({ timeout: SHOWN_MS });
      expect(await seriousViolations(page)).toEqual([]);
      await row.getByRole('link', { name: 'Carla' }).click();
      await page.getByRole('heading', { level: 1, name: 'Agent turn' }).waitFor();
      const calls = context.agent.callsFor(from).length;
      await page.getByRole('button', { name: 'Retry the turn' }).click();
      await page.getByRole('status').filter({ hasText: 'The turn runs again.' }).waitFor();
      await waitFor(() => context.agent.callsFor(from).length > calls, SHOWN_MS);
      await waitFor(() =>
        context.platform
          .sentMessages()
          .some((m) => m.to === from && (m.text as { body?: string })?.body === 'echo: help me'),
      );
      // The open inbox: the failure went when the retry took the turn up, and the answer came.
      await inbox.locator('ol.messages').getByText('echo: help me').waitFor({ timeout: SHOWN_MS });
      await failure.waitFor({ state: 'detached', timeout: SHOWN_MS });
    },
    BROWSER_TEST_MS,
  );

  it(
    'in the dark scheme (the system’s setting) the login, the inbox and the admin pages have nothing serious for axe',
    async () => {
      const dark = await browser.newContext({
        baseURL: service.url,
        locale: 'en-US',
        colorScheme: 'dark',
        viewport: { width: 1280, height: 800 },
      });
      contexts.push(dark);
      const page = await dark.newPage();
      await page.goto('/console/');
      await page.getByLabel('Username').waitFor();
      // The dark palette is the one in use.
      await expect(
        page.evaluate<string>('getComputedStyle(document.documentElement).backgroundColor'),
      ).resolves.toBe('rgb(17, 19, 21)');
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByLabel('Username').fill('admin');
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page
        .getByLabel('Number', { exact: true })
        .selectOption(await instanceIdByName('Main store (SP)'));
      await page
        .getByRole('navigation', { name: 'Conversations' })
        .getByRole('button', { name: /Carla/ })
        .click({ timeout: SHOWN_MS });
      await page.locator('ol.messages li.message').first().waitFor({ timeout: SHOWN_MS });
      expect(await seriousViolations(page)).toEqual([]);
      for (const section of ['Overview', 'Instances', 'Events', 'Failed turns']) {
        await go(page, section);
        expect({ section, violations: await seriousViolations(page) }).toEqual({
          section,
          violations: [],
        });
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'every admin page at 390 px and in Brazilian Portuguese: usable, and axe finds nothing serious',
    async () => {
      const page = await newPage(390, 'pt-BR');
      await page.goto('/console/');
      await page.getByLabel('Usuário').fill('admin');
      await page.getByLabel('Senha').fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Entrar' }).click();
      const nav = page.getByRole('navigation', { name: 'Seções' });
      await nav.waitFor();
      for (const section of [
        'Visão geral',
        'Instâncias',
        'Chaves de API',
        'Contas',
        'Eventos',
        'Turnos com falha',
      ]) {
        await nav.getByRole('link', { name: section, exact: true }).click();
        await page.getByRole('heading', { level: 1, name: section }).waitFor({ timeout: SHOWN_MS });
        expect({ section, violations: await seriousViolations(page) }).toEqual({
          section,
          violations: [],
        });
        // Nothing wider than the phone but a table's own scroll.
        const overflow = await page.evaluate<number>(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        );
        expect({ section, overflow }).toEqual({ section, overflow: 0 });
      }
    },
    BROWSER_TEST_MS,
  );
});
