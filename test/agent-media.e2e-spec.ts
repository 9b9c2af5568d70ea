import {
  MEDIA_CONTENT,
  deliverSigned,
  envelope,
  type WebhookTarget,
} from './support/fake-platform.js';
import {
  APP_SECRET,
  adminToken,
  createInstance,
  useTestService,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352270009';

describe("the agent's signed media links", () => {
  const context = useTestService({
    agent: true,
    // The address the agent is given; the test calls the service wherever it listens.
    env: { PUBLIC_URL: 'https://connector.example.com', MESSAGE_BUFFER_DELAY: '1' },
  });
  const target = (): WebhookTarget => ({
    url: `${context.service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
  });
  const local = (url: string) => url.replace('https://connector.example.com', context.service.url);

  beforeAll(async () => {
    await createInstance(
      context.service.url,
      await adminToken(context.service.url),
      PHONE_NUMBER_ID,
      'Media links',
    );
  });

  it('gives a media message a URL that downloads the exact bytes once, without a key, and refuses a tampered one', async () => {
    const image = {
      from: '5511944440001',
      id: 'wamid.media-link-1',
      timestamp: String(Math.floor(Date.now() / 1000)),
      type: 'image',
      image: { id: 'media-77', mime_type: 'image/jpeg', caption: 'o produto' },
    };
    expect(
      await deliverSigned(target(), envelope(target(), 'messages', { messages: [image] })),
    ).toBe(200);
    await waitFor(() => context.agent.calls.length === 1, 20_000);
    const [message] = context.agent.calls[0].body.messages as Array<{
      media?: { id: string; mime_type: string; url: string };
    }>;
    expect(message.media).toEqual({
      id: 'media-77',
      mime_type: 'image/jpeg',
      url: expect.stringMatching(
        /^https:\/\/connector\.example\.com\/media-links\/[\w-]+\.[\w-]+$/,
      ),
    });
    const url = local(message.media!.url);

    // Another media id under the same signature.
    const [base, token] = url.split('/media-links/');
    const [, signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify(['x', 'media-78', 9_999_999_999])).toString(
      'base64url',
    );
    const tampered = `${base}/media-links/${forged}.${signature}`;
    const refused = await fetch(tampered);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      code: 'media_link_refused',
      message: 'The link is not valid',
    });

    // A HEAD checks a link without using it up.
    expect((await fetch(url, { method: 'HEAD' })).status).toBe(200);
    const downloaded = await fetch(url);
    expect(downloaded.status).toBe(200);
    expect(downloaded.headers.get('content-type')).toBe('image/jpeg');
    expect(await downloaded.text()).toBe(MEDIA_CONTENT);
    // The file the link names, asked of the platform for this number.
    expect(context.platform.callsTo(/^\/v[\d.]+\/media-77$/)).toEqual([
      expect.objectContaining({ query: { phone_number_id: PHONE_NUMBER_ID } }),
    ]);
    expect(downloaded.headers.get('content-disposition')).toBe('attachment; filename="media-77"');
    expect(downloaded.headers.get('cache-control')).toBe('no-store');

    // Used now: a HEAD says so too.
    expect((await fetch(url, { method: 'HEAD' })).status).toBe(403);
    const again = await fetch(url);
    expect(again.status).toBe(403);
    expect(await again.json()).toMatchObject({ message: expect.stringContaining('used already') });
  });
});
