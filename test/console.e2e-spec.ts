import { mkdir } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CONSOLE_CSP } from '../src/console/serve-console.js';
import { launchBrowser, seriousViolations } from './support/browser.js';
import { startServiceProcess } from './support/service-process.js';
import {
  deliverSigned,
  envelope,
  MEDIA_CONTENT,
  type WebhookTarget,
  simulatePhoneContacts,
  simulateStatus,
  simulateUserPreference,
} from './support/fake-platform.js';
import {
  ADMIN_PASSWORD,
  APP_SECRET,
  adminToken,
  createInstance,
  http,
  useTestService,
  waitFor,
  type TestApp,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352288301';
const OTHER_NUMBER_ID = '106540352288302';
const PASSWORD = 'correct horse battery staple';
/** Where the README's screenshots are written: each run takes them again, so they stay true. */
const SCREENSHOTS = new URL('../docs/console/', import.meta.url);
/** A generous bound for what the page shows live (the bench measures how fast). */
const SHOWN_MS = 30_000;

let sequence = 0;
/** A browser's steps take longer than an API call's. */
const BROWSER_TEST_MS = 240_000;

describe('The console in a browser: log in, the live inbox, take over and answer, hand back', () => {
  const context = useTestService({
    agent: true,
    env: {
      MESSAGE_BUFFER_DELAY: '0.2',
      MESSAGE_BUFFER_MAX_WAIT: '1',
      AGENT_TYPING_INDICATOR: 'false',
      LIVE_KEEPALIVE_S: '5',
    },
  });
  let service: TestApp;
  let browser: Browser;
  let admin: string;
  let instanceId: string;
  let otherId: string;
  const contexts: BrowserContext[] = [];

  const target = (): WebhookTarget => ({
    url: `${service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
  });
  const customerWrites = async (
    from: string,
    text: string,
    at = Math.floor(Date.now() / 1000),
    quoting?: string,
  ): Promise<string> => {
    const wamid = `wamid.console${++sequence}`;
    const status = await deliverSigned(
      target(),
      envelope(target(), 'messages', {
        contacts: [{ profile: { name: `Customer ${from.slice(-4)}` }, wa_id: from }],
        messages: [
          {
            from,
            id: wamid,
            timestamp: String(at),
            type: 'text',
            text: { body: text },
            ...(quoting ? { context: { from, id: quoting } } : {}),
          },
        ],
      }),
    );
    expect(status).toBe(200);
    return wamid;
  };
  const statusArrives = async (wamid: string, to: string, status: 'delivered' | 'read') => {
    expect(await simulateStatus(target(), wamid, status, { waId: to })).toBe(200);
  };
  const stored = (wamid: string) =>
    waitFor(
      async () =>
        (await context.db.query('SELECT 1 FROM messages WHERE wamid = $1', [wamid])).length > 0,
    );
  /** A new browser session (its own cookies), in English, at `width` pixels. */
  const newPage = async (width = 1280, baseUrl = service.url): Promise<Page> => {
    const browserContext = await browser.newContext({
      baseURL: baseUrl,
      locale: 'en-US',
      viewport: { width, height: 800 },
    });
    contexts.push(browserContext);
    return browserContext.newPage();
  };
  const logIn = async (page: Page, username: string, password: string) => {
    await page.goto('/console/');
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('navigation', { name: 'Conversations' }).waitFor();
  };
  const contactRow = (page: Page, name: string | RegExp) =>
    page.getByRole('navigation', { name: 'Conversations' }).getByRole('button', { name });
  const messageList = (page: Page) => page.locator('ol.messages');
  const outgoing = () => context.platform.sentMessages();

  beforeAll(async () => {
    service = context.service;
    browser = await launchBrowser();
    admin = await adminToken(service.url);
    instanceId = await createInstance(service.url, admin, PHONE_NUMBER_ID, 'Main store');
    otherId = await createInstance(service.url, admin, OTHER_NUMBER_ID, 'Other store');
    const created = await http(service.url, 'POST', '/admin/accounts', {
      token: admin,
      body: {
        username: 'ana',
        display_name: 'Ana Souza',
        role: 'operator',
        password: PASSWORD,
        instance_ids: [instanceId],
      },
    });
    expect(created.status).toBe(201);
    await mkdir(SCREENSHOTS, { recursive: true });
  });

  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });

  afterAll(async () => {
    await browser?.close();
  }, BROWSER_TEST_MS);

  it('is served at /console under a strict Content-Security-Policy, with no inline script', async () => {
    const page = await fetch(`${service.url}/console/`);
    expect(page.status).toBe(200);
    const policy = page.headers.get('content-security-policy')!;
    expect(policy).toBe(CONSOLE_CSP);
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe-');
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\son\w+=/);
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1];
    const asset = await fetch(`${service.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');

    // A page of the console opened by its address is the page, under the same policy;
    // a file that is not there stays a 404.
    const deep = await fetch(`${service.url}/console/events/0b4c6c0e`);
    expect(deep.status).toBe(200);
    expect(deep.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(await deep.text()).toBe(html);
    expect((await fetch(`${service.url}/console/assets/gone-1234.js`)).status).toBe(404);
  });

  it(
    'keeps the session in an httpOnly cookie; an operator sees only its instance, and no admin route',
    async () => {
      const page = await newPage();
      await logIn(page, 'ana', PASSWORD);
      const cookies = await page.context().cookies();
      const session = cookies.find((c) => c.name === 'mc_session')!;
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
      // No script can read it, and nothing of it is kept in the page's storage.
      expect(await page.evaluate<string>('document.cookie')).not.toContain('mc_session');
      expect(
        await page.evaluate<string>(
          'JSON.stringify(localStorage) + JSON.stringify(sessionStorage)',
        ),
      ).not.toContain(session.value);
      const options = await page
        .getByLabel('Number', { exact: true })
        .locator('option')
        .allTextContents();
      expect(options).toHaveLength(1);
      expect(options[0]).toMatch(/^Main store\b/);

      // The cookie opens the inbox of its instance only, and no admin route.
      const request = page.context().request;
      expect((await request.get(`/contacts?instance_id=${instanceId}`)).status()).toBe(200);
      expect((await request.get(`/contacts?instance_id=${otherId}`)).status()).toBe(403);
      expect((await request.get('/admin/instances')).status()).toBe(403);
      // A change made with the cookie must come from the console (its header).
      const forged = await request.post('/contacts/5511955550000/handoff', {
        data: { instance_id: instanceId },
      });
      expect(forged.status()).toBe(403);

      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('button', { name: 'Log in' }).waitFor();
      expect((await request.get(`/contacts?instance_id=${instanceId}`)).status()).toBe(401);
    },
    BROWSER_TEST_MS,
  );

  it(
    'shows a customer’s message live, the agent’s answer as the agent’s; take over, reply with text and an image, ticks move; hand back',
    async () => {
      const page = await newPage();
      await logIn(page, 'admin', ADMIN_PASSWORD);
      await page.getByLabel('Number', { exact: true }).selectOption(instanceId);

      const from = '5511955550001';
      await customerWrites(from, 'Hi, where is my order?');
      await contactRow(page, /Customer 0001/).click({ timeout: SHOWN_MS });
      const list = messageList(page);
      await list
        .getByText('Hi, where is my order?', { exact: true })
        .waitFor({ timeout: SHOWN_MS });
      // The fake agent echoes: its answer shows after the message, marked as the agent's.
      const answer = list.locator('li.message.outbound.agent');
      await answer.getByText('echo: Hi, where is my order?').waitFor({ timeout: SHOWN_MS });
      await expect(answer.locator('.by').textContent()).resolves.toBe('Agent');
      const texts = await list.locator('li.message p.text').allTextContents();
      expect(texts.indexOf('Hi, where is my order?')).toBeLessThan(
        texts.indexOf('echo: Hi, where is my order?'),
      );

      await page.getByRole('button', { name: 'Take over' }).click();
      await page.getByRole('button', { name: 'Hand back' }).waitFor();
      await page.getByRole('status').filter({ hasText: 'Agent paused until' }).first().waitFor();
      await page.screenshot({ path: new URL('conversation-taken-over.png', SCREENSHOTS).pathname });

      await page.getByLabel('Message', { exact: true }).fill('Ana here: it left this *morning*.');
      await page.getByLabel('Message', { exact: true }).press('Enter');
      await waitFor(() =>
        outgoing().some(
          (m) =>
            m.to === from &&
            (m.text as { body?: string })?.body === 'Ana here: it left this *morning*.',
        ),
      );
      const mine = list.locator('li.message.outbound.person', { hasText: 'Ana here' });
      await mine.locator('strong', { hasText: 'morning' }).waitFor({ timeout: SHOWN_MS });
      await expect(mine.locator('.by').textContent()).resolves.toBe('admin');

      // An image: uploaded through the service, then sent.
      await page.locator('#composer-file').setInputFiles({
        name: 'receipt.png',
        mimeType: 'image/png',
        buffer: Buffer.from('89504e470d0a1a0a', 'hex'),
      });
      await waitFor(() => outgoing().some((m) => m.to === from && m.type === 'image'));

      const sentText = outgoing().find(
        (m) => m.to === from && (m.text as { body?: string })?.body?.startsWith('Ana here'),
      )!;
      const [{ wamid }] = await context.db.query<{ wamid: string }>(
        `SELECT wamid FROM messages WHERE direction = 'outbound' AND body->>'body' = $1`,
        ['Ana here: it left this *morning*.'],
      );
      expect(sentText).toBeTruthy();
      await statusArrives(wamid, from, 'delivered');
      await mine.getByRole('img', { name: 'Delivered' }).waitFor({ timeout: SHOWN_MS });
      await statusArrives(wamid, from, 'read');
      await mine.getByRole('img', { name: 'Read' }).waitFor({ timeout: SHOWN_MS });

      // Taken over: the customer's next message is shown, and the agent is not called.
      const callsBefore = context.agent.callsFor(from).length;
      const during = await customerWrites(from, 'Thanks, Ana');
      await list.getByText('Thanks, Ana', { exact: true }).waitFor({ timeout: SHOWN_MS });
      await stored(during);
      const [held] = await context.db.query<{ turn_id: string | null; awaiting_turn: boolean }>(
        'SELECT turn_id, awaiting_turn FROM messages WHERE wamid = $1',
        [during],
      );
      expect(held).toEqual({ turn_id: null, awaiting_turn: false });
      expect(context.agent.callsFor(from)).toHaveLength(callsBefore);
      // On screen as it comes: read, for everyone (the list's count goes).
      await contactRow(page, /Customer 0001/)
        .getByLabel(/unread/)
        .waitFor({ state: 'detached', timeout: SHOWN_MS });
      await page.screenshot({ path: new URL('inbox.png', SCREENSHOTS).pathname });

      await page.getByRole('button', { name: 'Hand back' }).click();
      await page.getByRole('button', { name: 'Take over' }).waitFor();
      await customerWrites(from, 'One more question');
      await waitFor(() => context.agent.callsFor(from).length > callsBefore, 20_000);
      await list.getByText('echo: One more question').waitFor({ timeout: SHOWN_MS });
    },
    BROWSER_TEST_MS,
  );

  it(
    'refuses free text with the window closed, and to an opted-out contact',
    async () => {
      const page = await newPage();
      await logIn(page, 'ana', PASSWORD);
      // Wrote two days ago: the 24-hour window is closed.
      await customerWrites('5511955550002', 'old message', Math.floor(Date.now() / 1000) - 172_800);
      await customerWrites('5511955550003', 'STOP');
      await contactRow(page, /Customer 0002/).click({ timeout: SHOWN_MS });
      await page.getByText('The 24-hour window is closed').waitFor();
      await expect(page.getByLabel('Message', { exact: true }).isDisabled()).resolves.toBe(true);
      await expect(
        page.getByRole('button', { name: 'Send', exact: true }).isDisabled(),
      ).resolves.toBe(true);

      await contactRow(page, /Customer 0003/).click({ timeout: SHOWN_MS });
      await page.getByText('This contact opted out').waitFor();
      await expect(page.getByLabel('Message', { exact: true }).isDisabled()).resolves.toBe(true);
      await contactRow(page, /Customer 0003/)
        .getByText('Opted out')
        .waitFor();

      // The customer stops marketing messages in the app, and the owner's phone book
      // names them: the open screen shows both as they happen.
      await contactRow(page, /Customer 0002/).click();
      const stopAt = Math.floor(Date.now() / 1000);
      expect(
        await simulateUserPreference(target(), '5511955550002', 'stop', stopAt, 'Customer 0002'),
      ).toBe(200);
      await contactRow(page, /Customer 0002/)
        .getByText('No marketing')
        .waitFor({ timeout: SHOWN_MS });
      expect(
        await simulatePhoneContacts(target(), [
          { phoneNumber: '5511955550002', fullName: 'Dona Rosa' },
        ]),
      ).toBe(200);
      await page.getByText('In the phone book as Dona Rosa').waitFor({ timeout: SHOWN_MS });
    },
    BROWSER_TEST_MS,
  );

  it(
    'lists each contact’s last message and unread count; opening it reads it for every session; a reply shows what it quotes; filters ask the service',
    async () => {
      const from = '5511955550006';
      const first = await customerWrites(from, 'Is the blue one in stock?');
      await customerWrites(from, 'The size M', undefined, first);
      const one = await newPage();
      const two = await newPage();
      await logIn(one, 'ana', PASSWORD);
      await logIn(two, 'ana', PASSWORD);
      const row = (page: Page) => contactRow(page, /Customer 0006/);
      // The agent answered (an echo): its answer is the last message; the customer's two are unread.
      for (const page of [one, two]) {
        await row(page).getByLabel('2 unread messages').waitFor({ timeout: SHOWN_MS });
        await row(page)
          .getByText(/^Agent: echo:/)
          .waitFor({ timeout: SHOWN_MS });
      }
      expect(await seriousViolations(one)).toEqual([]);

      await row(one).click();
      // The reply shows the message it quotes; a click on it goes there.
      const quote = messageList(one).getByRole('button', { name: /Is the blue one in stock\?/ });
      await quote.waitFor({ timeout: SHOWN_MS });
      await expect(quote.textContent()).resolves.toContain('Customer');
      // Read in one session: the other's count goes too, live.
      await row(two)
        .getByLabel(/unread/)
        .waitFor({ state: 'detached', timeout: SHOWN_MS });
      await row(one)
        .getByLabel(/unread/)
        .waitFor({ state: 'detached', timeout: SHOWN_MS });
      // A message that comes while the conversation is on screen is read as it comes.
      await customerWrites(from, 'Thanks!');
      await row(two).getByText('Agent: echo: Thanks!').waitFor({ timeout: SHOWN_MS });
      await row(two)
        .getByLabel(/unread/)
        .waitFor({ state: 'detached', timeout: SHOWN_MS });

      // Filters ask the service: only opted-out contacts, however many others there are.
      const asked: string[] = [];
      two.on('request', (request) => {
        if (request.url().includes('/contacts?')) asked.push(request.url());
      });
      await two.getByLabel('Show', { exact: true }).selectOption('optedOut');
      await contactRow(two, /Customer 0003/).waitFor({ timeout: SHOWN_MS });
      await expect(row(two).count()).resolves.toBe(0);
      expect(asked.some((url) => url.includes('state=opted_out'))).toBe(true);
    },
    BROWSER_TEST_MS,
  );

  it(
    'shows a document with its name and its size (asked of the platform, not downloaded)',
    async () => {
      const from = '5511955550007';
      const status = await deliverSigned(
        target(),
        envelope(target(), 'messages', {
          contacts: [{ profile: { name: 'Customer 0007' }, wa_id: from }],
          messages: [
            {
              from,
              id: `wamid.console${++sequence}`,
              timestamp: String(Math.floor(Date.now() / 1000)),
              type: 'document',
              document: { id: 'media-doc1', filename: 'invoice.pdf', mime_type: 'application/pdf' },
            },
          ],
        }),
      );
      expect(status).toBe(200);
      const page = await newPage();
      await logIn(page, 'ana', PASSWORD);
      await contactRow(page, /Customer 0007/).click({ timeout: SHOWN_MS });
      const document = messageList(page).locator('p.document');
      await document.getByRole('link', { name: 'invoice.pdf' }).waitFor({ timeout: SHOWN_MS });
      await document.getByText(`${MEDIA_CONTENT.length} byte`).waitFor({ timeout: SHOWN_MS });
      expect(context.platform.requests.some((r) => r.path.endsWith('/files/media-doc1'))).toBe(
        false,
      );
    },
    BROWSER_TEST_MS,
  );

  it(
    'a second session, on a second api process, sees live what the first sent',
    async () => {
      const second = await startServiceProcess({
        DATABASE_URL: context.db.url,
        PLATFORM_API_URL: context.platform.url,
        AGENT_MODULE_URL: context.agent.url,
        REDIS_PREFIX: service.config.REDIS_PREFIX,
        APP_ROLE: 'api',
      });
      try {
        const from = '5511955550004';
        await customerWrites(from, 'Anyone there?');
        const one = await newPage();
        const two = await newPage(1280, second.url);
        await logIn(one, 'ana', PASSWORD);
        await logIn(two, 'ana', PASSWORD);
        await contactRow(one, /Customer 0004/).click({ timeout: SHOWN_MS });
        await contactRow(two, /Customer 0004/).click({ timeout: SHOWN_MS });
        await one.getByLabel('Message', { exact: true }).fill('Yes, Ana here');
        await one.getByRole('button', { name: 'Send', exact: true }).click();
        await messageList(two).getByText('Yes, Ana here').waitFor({ timeout: SHOWN_MS });
      } finally {
        await second.stop();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'works with the keyboard alone, at 390 px, and axe finds nothing serious',
    async () => {
      const page = await newPage(390);
      await page.goto('/console/');
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByLabel('Username').focus();
      await page.keyboard.type('ana');
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await page.getByRole('navigation', { name: 'Conversations' }).waitFor();
      const from = '5511955550005';
      await customerWrites(from, 'Hello from a phone');
      const row = contactRow(page, /Customer 0005/);
      await row.waitFor({ timeout: SHOWN_MS });
      expect(await seriousViolations(page)).toEqual([]);

      // To the contact by Tab, open it with Enter, write and send with Enter.
      const focused = () =>
        page.evaluate<string>(
          'document.activeElement?.closest("li.contact") ? document.activeElement.textContent : ""',
        );
      for (let i = 0; i < 40 && !(await focused()).includes('Customer 0005'); i++) {
        await page.keyboard.press('Tab');
      }
      await page.keyboard.press('Enter');
      await messageList(page)
        .getByText('Hello from a phone', { exact: true })
        .waitFor({ timeout: SHOWN_MS });
      // One pane at a time on a phone: the list gives way to the conversation.
      await expect(
        page.getByRole('navigation', { name: 'Conversations' }).isVisible(),
      ).resolves.toBe(false);
      const composer = page.getByLabel('Message', { exact: true });
      await composer.focus();
      await page.keyboard.type('Typed on a phone');
      await page.keyboard.press('Enter');
      await waitFor(() =>
        outgoing().some(
          (m) => m.to === from && (m.text as { body?: string })?.body === 'Typed on a phone',
        ),
      );
      const box = (await composer.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(390);
      expect(await seriousViolations(page)).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
