import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { launchBrowser, seriousViolations } from './support/browser.js';
import {
  adminToken,
  createInstance,
  http,
  useTestService,
  waitFor,
  type TestApp,
} from './support/test-app.js';

/** Where the README's screenshots are written: each run takes them again, so they stay true. */
const SCREENSHOTS = new URL('../docs/console/', import.meta.url);

const PHONE_NUMBER_ID = '106540352299001';
const ACCOUNT = '102290129399001';
const PASSWORD = 'correct horse battery staple';
/** A generous bound for what a busy machine's browser shows (the bench measures how fast). */
const SHOWN_MS = 30_000;
const BROWSER_TEST_MS = 240_000;

interface Campaign {
  id: string;
  state: string;
  progress: { sent: number; skipped: number; queued: number };
}

/** A list as a Brazilian spreadsheet exports it: semicolons, CRLF, quotes doubled in quotes. */
const csv = (rows: string[][]): Buffer =>
  Buffer.from(
    rows
      .map((row) =>
        row.map((cell) => (/[";]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell)).join(';'),
      )
      .join('\r\n') + '\r\n',
    'utf8',
  );

const HEADER = ['telefone', 'nome', 'prazo', 'pedido'];

describe('The console’s templates and campaigns in a browser', () => {
  const context = useTestService({ env: { PLATFORM_SEND_RATE: '1000' } });
  let service: TestApp;
  let browser: Browser;
  let admin: string;
  let instanceId: string;
  const contexts: BrowserContext[] = [];

  /** A new browser session (its own cookies) in `locale` at `width` pixels; dialogs accepted. */
  const newPage = async (
    width = 1280,
    locale = 'en-US',
    colorScheme: 'light' | 'dark' = 'light',
  ): Promise<Page> => {
    const browserContext = await browser.newContext({
      baseURL: service.url,
      locale,
      colorScheme,
      viewport: { width, height: 900 },
    });
    contexts.push(browserContext);
    const page = await browserContext.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    return page;
  };
  /** Logs the operator in (English), then opens `section` from the navigation everyone has. */
  const operatorOn = async (section: 'Templates' | 'Campaigns', page?: Page): Promise<Page> => {
    const opened = page ?? (await newPage());
    await opened.goto('/console/');
    await opened.getByLabel('Username').fill('ana');
    await opened.getByLabel('Password').fill(PASSWORD);
    await opened.getByRole('button', { name: 'Log in' }).click();
    await go(opened, section);
    return opened;
  };
  const go = async (page: Page, section: string) => {
    await page
      .getByRole('navigation', { name: 'Messaging' })
      .getByRole('link', { name: section, exact: true })
      .click();
    await page.getByRole('heading', { level: 1, name: section }).waitFor({ timeout: SHOWN_MS });
  };
  /** The error text the API's refusal left beside a field (the field is described by it). */
  const errorBeside = async (field: Locator): Promise<string> => {
    await waitFor(async () => (await field.getAttribute('aria-invalid')) === 'true', SHOWN_MS);
    const id = (await field.getAttribute('aria-describedby'))!;
    return (await field.page().locator(`[id="${id}"]`).textContent()) ?? '';
  };
  const campaignNow = async (id: string) =>
    (
      await http<Campaign>(service.url, 'GET', `/campaigns/${id}?instance_id=${instanceId}`, {
        token: admin,
      })
    ).body;
  /** A shipping_update campaign created through the API, `count` recipients, started. */
  const apiCampaign = async (name: string, count: number, rate: number): Promise<string> => {
    const created = await http<Campaign>(service.url, 'POST', '/campaigns', {
      token: admin,
      body: {
        instance_id: instanceId,
        name,
        template_name: 'shipping_update',
        language: 'pt_BR',
        rate_per_s: rate,
        start: true,
        recipients: Array.from({ length: count }, (_, i) => ({
          to: `55119770000${String(i).padStart(2, '0')}`,
          parameters: {
            '1': `Cliente ${i}`,
            '2': '2 dias',
            'header.1': `#${i}`,
            'button.0': `${i}`,
          },
        })),
      },
    });
    expect(created.status).toBe(201);
    return created.body.id;
  };
  /** The page is no wider than the phone (a table scrolls in its own box). */
  const overflow = (page: Page) =>
    page.evaluate<number>(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );

  beforeAll(async () => {
    service = context.service;
    browser = await launchBrowser();
    admin = await adminToken(service.url);
    instanceId = await createInstance(service.url, admin, PHONE_NUMBER_ID, 'Main store', {
      channelAccountId: ACCOUNT,
    });
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
    // The workers read the account's catalogue once the instance is created.
    await waitFor(async () => {
      const listed = await http<{ data: unknown[] }>(
        service.url,
        'GET',
        `/templates?instance_id=${instanceId}`,
        { token: admin },
      );
      return listed.body.data?.length === 4;
    }, SHOWN_MS);
  }, BROWSER_TEST_MS);

  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });

  afterAll(async () => {
    await browser?.close();
  }, BROWSER_TEST_MS);

  it(
    'templates: an operator reads the catalogue with status and quality, filters it, syncs it; a preview renders the body with the values typed',
    async () => {
      const page = await operatorOn('Templates');
      const row = (name: RegExp) => page.getByRole('row', { name });
      await row(/shipping_update pt_BR Utility Approved High/).waitFor({ timeout: SHOWN_MS });
      await row(/shipping_update en_US Utility Approved High/).waitFor();
      await row(/autumn_sale pt_BR Marketing Approved High/).waitFor();
      await row(/winter_sale pt_BR Marketing Paused Low/).waitFor();

      // Filters the service applies: a status, a name prefix.
      await page.getByLabel('Status').selectOption({ label: 'Paused' });
      await row(/autumn_sale/).waitFor({ state: 'detached', timeout: SHOWN_MS });
      await expect(page.getByRole('row').count()).resolves.toBe(2);
      await page.getByLabel('Status').selectOption({ label: 'Any' });
      await page.getByLabel('Name starts with').fill('ship');
      await row(/winter_sale/).waitFor({ state: 'detached', timeout: SHOWN_MS });
      await expect(page.getByRole('row').count()).resolves.toBe(3);

      await page.getByRole('button', { name: 'Sync now' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: 'Synced: 4 templates on the platform, 0 removed.' })
        .waitFor({ timeout: SHOWN_MS });

      await page
        .getByRole('row', { name: /shipping_update pt_BR/ })
        .getByRole('link', { name: 'shipping_update' })
        .click();
      await page
        .getByRole('heading', { level: 1, name: 'shipping_update · pt_BR' })
        .waitFor({ timeout: SHOWN_MS });
      // As written, its variables unfilled; the kind of variables, and what a send fills.
      const written = page.getByRole('group', { name: 'As written' });
      await written
        .getByText('Olá {{1}}, seu pedido saiu para entrega e chega em {{2}}.')
        .waitFor();
      await page.getByText('Numbered ({{1}}, {{2}})').waitFor();
      expect(await seriousViolations(page)).toEqual([]);

      // The preview: the template's examples at first; values typed here go into the text.
      await expect(page.getByLabel('Body {{1}}').inputValue()).resolves.toBe('Maria');
      await page.getByLabel('Body {{1}}').fill('Joana');
      await page.getByLabel('Body {{2}}').fill('3 dias');
      await page.getByLabel('Header {{1}}').fill('#2024');
      await page.getByLabel('Button 1: the end of its URL').fill('2024');
      await page.getByRole('button', { name: 'Show what the customer reads' }).click();
      const rendered = page.getByRole('group', { name: 'What the customer reads' });
      await rendered
        .getByText('Olá Joana, seu pedido saiu para entrega e chega em 3 dias.', { exact: true })
        .waitFor({ timeout: SHOWN_MS });
      await rendered.getByText('Pedido #2024', { exact: true }).waitFor();
      await rendered.getByText('https://loja.example.com/pedidos/2024', { exact: true }).waitFor();
      await rendered.getByText('Loja Acme', { exact: true }).waitFor();
    },
    BROWSER_TEST_MS,
  );

  it(
    'templates: a new one with a header, variables and examples, a footer and two buttons; the API’s refusal shows beside its field; the platform takes it; listed pending; deleted',
    async () => {
      const page = await operatorOn('Templates');
      await page.getByRole('link', { name: 'New template' }).click();
      const form = page.getByRole('form', { name: 'New template' });
      await form.getByLabel('Name').fill('order_ready');
      await form.getByLabel('Language').fill('pt_BR');
      await form.getByLabel('Category').selectOption({ label: 'Utility' });
      await form.getByLabel('Header (optional)').fill('Pedido {{1}}');
      await form.getByLabel('Example of {{1}}').first().fill('#1042');
      // A body that starts with a variable: the platform would refuse it, the service says so.
      await form.getByLabel('Body').fill('{{1}}, seu pedido {{2}} está pronto.');
      const bodyExamples = form.getByRole('group', { name: 'Example values' }).last();
      await bodyExamples.getByLabel('Example of {{1}}').fill('Maria');
      await bodyExamples.getByLabel('Example of {{2}}').fill('#1042');
      await form.getByLabel('Footer (optional)').fill('Loja Acme');
      await form.getByRole('button', { name: 'Add a quick reply' }).click();
      await form
        .getByRole('group', { name: 'Button 1: quick reply' })
        .getByLabel('Button text')
        .fill('Obrigado');
      await form.getByRole('button', { name: 'Add a URL button' }).click();
      const urlButton = form.getByRole('group', { name: 'Button 2: URL' });
      await urlButton.getByLabel('Button text').fill('Ver pedido');
      await urlButton.getByLabel('URL').fill('https://loja.example.com/p/{{1}}');
      await urlButton.getByLabel('Example of {{1}}').fill('1042');
      await form.getByRole('button', { name: 'Submit for review' }).click();
      expect(await errorBeside(form.getByLabel('Body'))).toContain(
        'may not start or end with a variable',
      );
      await form.getByRole('alert').filter({ hasText: 'Check the fields marked below.' }).waitFor();
      expect(context.platform.templates(ACCOUNT).some((t) => t.name === 'order_ready')).toBe(false);

      await form.getByLabel('Body').fill('Olá {{1}}, seu pedido {{2}} está pronto.');
      await form.getByRole('button', { name: 'Submit for review' }).click();
      await page
        .getByRole('heading', { level: 1, name: 'order_ready · pt_BR' })
        .waitFor({ timeout: SHOWN_MS });
      await page.getByText('Pending review').first().waitFor();
      const submitted = context.platform.templates(ACCOUNT).find((t) => t.name === 'order_ready')!;
      expect(submitted).toMatchObject({ language: 'pt_BR', category: 'UTILITY' });
      expect(submitted.components).toEqual([
        {
          type: 'HEADER',
          format: 'TEXT',
          text: 'Pedido {{1}}',
          example: { header_text: ['#1042'] },
        },
        {
          type: 'BODY',
          text: 'Olá {{1}}, seu pedido {{2}} está pronto.',
          example: { body_text: [['Maria', '#1042']] },
        },
        { type: 'FOOTER', text: 'Loja Acme' },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'QUICK_REPLY', text: 'Obrigado' },
            {
              type: 'URL',
              text: 'Ver pedido',
              url: 'https://loja.example.com/p/{{1}}',
              example: ['https://loja.example.com/p/1042'],
            },
          ],
        },
      ]);

      await go(page, 'Templates');
      await page
        .getByRole('row', { name: /order_ready pt_BR Utility Pending review/ })
        .waitFor({ timeout: SHOWN_MS });

      await page.getByRole('link', { name: 'order_ready' }).click();
      await page.getByRole('button', { name: 'Delete this language' }).click();
      await page
        .getByRole('heading', { level: 1, name: 'Templates' })
        .waitFor({ timeout: SHOWN_MS });
      await page.getByRole('row', { name: /shipping_update pt_BR/ }).waitFor({ timeout: SHOWN_MS });
      await expect(page.getByRole('row', { name: /order_ready/ }).count()).resolves.toBe(0);
      expect(context.platform.templates(ACCOUNT).some((t) => t.name === 'order_ready')).toBe(false);
    },
    BROWSER_TEST_MS,
  );

  it(
    'campaigns: a semicolon CSV read in the browser, its columns mapped, the first messages previewed; created and started, its progress reaches completed; the recipients listed',
    async () => {
      context.platform.reset();
      const page = await operatorOn('Campaigns');
      await page.getByRole('link', { name: 'New campaign' }).click();
      await page.getByRole('heading', { level: 1, name: 'New campaign' }).waitFor();
      const rows = [
        ['5511900000001', 'Maria Silva', '2 dias', '1001'],
        ['5511900000002', 'José "Zé"', 'amanhã', '1002'],
        ['5511900000003', 'Carla', 'hoje', '1003'],
        ['5511900000004', 'Rui', '3 dias', '1004'],
      ];
      await page
        .getByLabel('CSV file')
        .setInputFiles({ name: 'lista.csv', mimeType: 'text/csv', buffer: csv([HEADER, ...rows]) });
      await page
        .getByRole('status')
        .filter({ hasText: 'lista.csv' })
        .filter({ hasText: 'separated by semicolons, 4 columns' })
        .waitFor({ timeout: SHOWN_MS });
      // Its first rows, quotes read as a spreadsheet writes them.
      await page.getByRole('cell', { name: 'José "Zé"', exact: true }).waitFor();

      await page
        .getByLabel('Template', { exact: true })
        .selectOption({ label: 'shipping_update (pt_BR)' });
      // The number column is guessed from its name; the variables are chosen.
      const number = page.getByLabel('Number column');
      await waitFor(async () => (await number.inputValue()) === 'telefone', SHOWN_MS);
      await page.getByLabel('Header {{1}}').selectOption('pedido');
      await page.getByLabel('Body {{1}}').selectOption('nome');
      await page.getByLabel('Body {{2}}').selectOption('prazo');
      await page.getByLabel('Button 1: the end of its URL').selectOption('pedido');

      // The first three rows as the customers will read them.
      const first = page.getByRole('group', { name: 'Message 1, to 5511900000001' });
      await first
        .getByText('Olá Maria Silva, seu pedido saiu para entrega e chega em 2 dias.')
        .waitFor({ timeout: SHOWN_MS });
      await first.getByText('Pedido 1001').waitFor();
      await first.getByText('https://loja.example.com/pedidos/1001').waitFor();
      await page
        .getByRole('group', { name: 'Message 2, to 5511900000002' })
        .getByText('Olá José "Zé", seu pedido saiu para entrega e chega em amanhã.')
        .waitFor({ timeout: SHOWN_MS });
      await page.getByRole('group', { name: 'Message 3, to 5511900000003' }).waitFor();
      await expect(page.getByRole('group', { name: /^Message 4/ }).count()).resolves.toBe(0);
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByLabel('Name', { exact: true }).fill('Primeira lista');
      await page.getByRole('button', { name: 'Create the campaign' }).click();
      await page
        .getByRole('heading', { level: 1, name: 'Primeira lista' })
        .waitFor({ timeout: SHOWN_MS });
      // Live: read again until the workers are done with everyone.
      const state = page.getByRole('region', { name: 'State' });
      await state.getByText('Completed', { exact: true }).waitFor({ timeout: SHOWN_MS });
      const progress = page.getByRole('region', { name: 'Progress' });
      await progress.getByText('4 of 4 done').waitFor({ timeout: SHOWN_MS });
      await expect(progress.locator('[data-count="sent"] dd').textContent()).resolves.toBe('4');
      await expect(progress.locator('[data-count="queued"] dd').textContent()).resolves.toBe('0');
      // Finished: no action left to take.
      await expect(state.getByRole('button').count()).resolves.toBe(0);

      const recipients = page.getByRole('region', { name: 'Recipients', exact: true });
      for (const [to] of rows) {
        await recipients
          .getByRole('row', { name: new RegExp(`${to} Sent`) })
          .waitFor({ timeout: SHOWN_MS });
      }
      await page.screenshot({
        path: new URL('campaign.png', SCREENSHOTS).pathname,
        fullPage: true,
      });
      await recipients.getByLabel('State').selectOption({ label: 'Failed' });
      await recipients.getByText('No recipients in this state').waitFor({ timeout: SHOWN_MS });

      // Exactly one send each, with its row's cells.
      const sends = context.platform.sentMessages();
      expect(sends.map((s) => s.to).sort()).toEqual(rows.map(([to]) => to).sort());
      const jose = sends.find((s) => s.to === '5511900000002') as {
        template: { components: Array<{ type: string; parameters: Array<{ text?: string }> }> };
      };
      expect(
        jose.template.components.find((c) => c.type === 'body')!.parameters.map((p) => p.text),
      ).toEqual(['José "Zé"', 'amanhã']);

      await go(page, 'Campaigns');
      const listed = page.getByRole('row', { name: /Primeira lista/ });
      await listed.getByText('Completed').waitFor({ timeout: SHOWN_MS });
      await listed.getByText('4 of 4 done').waitFor();
      await expect(listed.getByRole('progressbar').getAttribute('value')).resolves.toBe('4');
    },
    BROWSER_TEST_MS,
  );

  it(
    'campaigns: a row the template cannot take refuses the file, shown beside it with its line; nothing is created',
    async () => {
      const before = (
        await http<{ data: unknown[] }>(
          service.url,
          'GET',
          `/campaigns?instance_id=${instanceId}&limit=100`,
          { token: admin },
        )
      ).body.data.length;
      const page = await operatorOn('Campaigns');
      await page.getByRole('link', { name: 'New campaign' }).click();
      const rows = [
        ['5511900000011', 'Ana', '2 dias', '11'],
        ['5511900000012', 'Bia', '2 dias', '12'],
        ['5511900000013', 'Caio', '2 dias', '13'],
        ['5511900000014', 'Duda', '2 dias', '14'],
        // Line 6: no deadline, which the body's {{2}} needs.
        ['5511900000015', 'Edu', '', '15'],
      ];
      await page
        .getByLabel('CSV file')
        .setInputFiles({ name: 'falha.csv', mimeType: 'text/csv', buffer: csv([HEADER, ...rows]) });
      await page
        .getByLabel('Template', { exact: true })
        .selectOption({ label: 'shipping_update (pt_BR)' });
      await page.getByLabel('Header {{1}}').selectOption('pedido');
      await page.getByLabel('Body {{1}}').selectOption('nome');
      await page.getByLabel('Body {{2}}').selectOption('prazo');
      await page.getByLabel('Button 1: the end of its URL').selectOption('pedido');
      await page
        .getByRole('group', { name: 'Message 3, to 5511900000013' })
        .getByText('Olá Caio, seu pedido saiu para entrega e chega em 2 dias.')
        .waitFor({ timeout: SHOWN_MS });
      await page.getByLabel('Name', { exact: true }).fill('Com falha');
      await page.getByRole('button', { name: 'Create the campaign' }).click();
      const beside = await errorBeside(page.getByLabel('CSV file'));
      expect(beside).toMatch(/^line 6: /);
      await page.getByRole('alert').filter({ hasText: 'Check the fields marked below.' }).waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByRole('heading', { level: 1, name: 'New campaign' }).waitFor();
      const after = (
        await http<{ data: unknown[] }>(
          service.url,
          'GET',
          `/campaigns?instance_id=${instanceId}&limit=100`,
          { token: admin },
        )
      ).body.data.length;
      expect(after).toBe(before);
    },
    BROWSER_TEST_MS,
  );

  it(
    'campaigns: a running campaign paused, resumed and cancelled from its page; an action the campaign moved past shows the API’s conflict',
    async () => {
      // One send every 10 s: it stays running while the page acts on it.
      const id = await apiCampaign('Devagar', 5, 0.1);
      const page = await operatorOn('Campaigns');
      await page.getByRole('link', { name: 'Devagar' }).click();
      await page.getByRole('heading', { level: 1, name: 'Devagar' }).waitFor({ timeout: SHOWN_MS });
      const state = page.getByRole('region', { name: 'State' });
      await state.getByText('Running', { exact: true }).waitFor({ timeout: SHOWN_MS });

      await state.getByRole('button', { name: 'Pause' }).click();
      await state.getByText('Paused', { exact: true }).waitFor({ timeout: SHOWN_MS });
      await state.getByText('Paused: paused by a person').waitFor();
      expect((await campaignNow(id)).state).toBe('paused');
      expect(await seriousViolations(page)).toEqual([]);

      await state.getByRole('button', { name: 'Resume' }).click();
      await state.getByText('Running', { exact: true }).waitFor({ timeout: SHOWN_MS });
      expect((await campaignNow(id)).state).toBe('running');

      await state.getByRole('button', { name: 'Cancel the campaign' }).click();
      await state.getByText('Cancelled', { exact: true }).waitFor({ timeout: SHOWN_MS });
      const cancelled = await campaignNow(id);
      expect(cancelled.state).toBe('cancelled');
      expect(cancelled.progress.skipped).toBeGreaterThan(0);
      const progress = page.getByRole('region', { name: 'Progress' });
      await progress
        .getByText(`Cancelled: ${cancelled.progress.skipped}`)
        .waitFor({ timeout: SHOWN_MS });

      // Another page still shows a campaign as running (its reads held back) when someone else
      // cancels it: its Pause is refused, and the page says what the campaign is now.
      const other = await apiCampaign('Outra', 5, 0.1);
      const stale = await operatorOn('Campaigns', await newPage());
      let hold = false;
      let held = 0;
      await stale.route(
        (url) => url.pathname === `/campaigns/${other}`,
        async (route) => {
          if (hold) held++;
          await waitFor(() => !hold, SHOWN_MS);
          await route.continue();
        },
      );
      await stale.goto(`/console/campaigns/${other}`);
      const staleState = stale.getByRole('region', { name: 'State' });
      await staleState.getByText('Running', { exact: true }).waitFor({ timeout: SHOWN_MS });
      // Its next read is held: what it shows stays as it is.
      hold = true;
      await waitFor(() => held > 0, SHOWN_MS);
      const cancel = await http(service.url, 'POST', `/campaigns/${other}/cancel`, {
        token: admin,
        body: { instance_id: instanceId },
      });
      expect(cancel.status).toBe(200);
      await staleState.getByRole('button', { name: 'Pause' }).click();
      await staleState
        .getByRole('alert')
        .filter({ hasText: 'Not done: the campaign is cancelled now.' })
        .waitFor({ timeout: SHOWN_MS });
      hold = false;
      await staleState.getByText('Cancelled', { exact: true }).waitFor({ timeout: SHOWN_MS });
    },
    BROWSER_TEST_MS,
  );

  it(
    'at 390 px in Brazilian Portuguese, and in the dark scheme: templates and campaigns usable, nothing wider than the phone, nothing serious for axe',
    async () => {
      const page = await newPage(390, 'pt-BR');
      await page.goto('/console/');
      await page.getByLabel('Usuário').fill('ana');
      await page.getByLabel('Senha').fill(PASSWORD);
      await page.getByRole('button', { name: 'Entrar' }).click();
      const nav = page.getByRole('navigation', { name: 'Mensagens' });
      await nav.waitFor({ timeout: SHOWN_MS });
      const check = async (what: string) => {
        expect({ what, violations: await seriousViolations(page) }).toEqual({
          what,
          violations: [],
        });
        expect({ what, overflow: await overflow(page) }).toEqual({ what, overflow: 0 });
      };

      await nav.getByRole('link', { name: 'Modelos', exact: true }).click();
      await page
        .getByRole('row', { name: /shipping_update pt_BR Utilidade Aprovado Alta/ })
        .waitFor({ timeout: SHOWN_MS });
      await check('templates');
      await page.getByRole('link', { name: 'Novo modelo' }).click();
      await page.getByLabel('Corpo', { exact: true }).fill('Olá {{1}}, tudo bem?');
      await page.getByRole('button', { name: 'Adicionar um botão de URL' }).click();
      await check('new template');

      await nav.getByRole('link', { name: 'Campanhas', exact: true }).click();
      await page
        .getByRole('row', { name: /Primeira lista/ })
        .getByText('Concluída')
        .waitFor({ timeout: SHOWN_MS });
      await check('campaigns');
      await page.getByRole('link', { name: 'Primeira lista' }).click();
      await page
        .getByRole('region', { name: 'Destinatários', exact: true })
        .getByRole('row', { name: /5511900000001 Enviado/ })
        .waitFor({ timeout: SHOWN_MS });
      await check('campaign');

      await nav.getByRole('link', { name: 'Campanhas', exact: true }).click();
      await page.getByRole('link', { name: 'Nova campanha' }).click();
      await page.getByLabel('Arquivo CSV').setInputFiles({
        name: 'lista.csv',
        mimeType: 'text/csv',
        buffer: csv([HEADER, ['5511900000021', 'Lia', 'hoje', '21']]),
      });
      await page
        .getByLabel('Modelo', { exact: true })
        .selectOption({ label: 'autumn_sale (pt_BR)' });
      await page.getByLabel('Corpo {{first_name}}').selectOption('nome');
      await page.getByLabel('Corpo {{code}}').selectOption('pedido');
      await page
        .getByRole('group', { name: 'Mensagem 1, para 5511900000021' })
        .getByText('Oi Lia! Use o cupom 21 e ganhe 20% de desconto.')
        .waitFor({ timeout: SHOWN_MS });
      await check('new campaign');

      // The dark palette: the pages with the most colour (badges, bars, bubbles).
      const dark = await newPage(1280, 'en-US', 'dark');
      await operatorOn('Campaigns', dark);
      await dark.getByRole('link', { name: 'Primeira lista' }).click();
      await dark
        .getByRole('region', { name: 'Recipients', exact: true })
        .getByRole('row', { name: /5511900000001 Sent/ })
        .waitFor({ timeout: SHOWN_MS });
      expect(await seriousViolations(dark)).toEqual([]);
      await go(dark, 'Templates');
      await dark.getByRole('link', { name: 'winter_sale' }).click();
      await dark.getByRole('group', { name: 'As written' }).waitFor({ timeout: SHOWN_MS });
      await dark.getByRole('button', { name: 'Show what the customer reads' }).click();
      await dark
        .getByRole('group', { name: 'What the customer reads' })
        .waitFor({ timeout: SHOWN_MS });
      expect(await seriousViolations(dark)).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
