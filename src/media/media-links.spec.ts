import type { Redis } from 'ioredis';
import { loadConfig } from '../config/load-config.js';
import { MediaLinks } from './media-links.js';

const KEY = 'a'.repeat(64);

function links(env: Record<string, string> = {}): MediaLinks {
  const { config } = loadConfig({
    ENCRYPTION_KEY: KEY,
    PUBLIC_URL: 'https://c.example.com/',
    ...env,
  });
  const used = new Set<string>();
  const redis = {
    set: (key: string) => Promise.resolve(used.has(key) ? null : (used.add(key), 'OK')),
  } as unknown as Redis;
  return new MediaLinks(config, redis);
}

describe('MediaLinks', () => {
  const now = Date.UTC(2026, 10, 26, 12, 0, 0);

  it('signs a URL under PUBLIC_URL that verifies to its instance and media id until it expires', () => {
    const media = links();
    const url = media.url('instance-1', 'media-9', now)!;
    expect(url).toMatch(/^https:\/\/c\.example\.com\/media-links\/[\w-]+\.[\w-]+$/);
    const token = url.split('/').pop()!;
    expect(media.verify(token, now)).toEqual({
      instanceId: 'instance-1',
      mediaId: 'media-9',
      expires: now / 1000 + 900,
    });
    expect(media.verify(token, now + 900_000)).toBe('expired');
  });

  it('refuses a tampered token, one signed with another key, and a malformed one', () => {
    const media = links();
    const token = media.sign({ instanceId: 'i', mediaId: 'm', expires: now / 1000 + 60 });
    const [payload, signature] = token.split('.');
    const other = Buffer.from(JSON.stringify(['i', 'other-media', now / 1000 + 60])).toString(
      'base64url',
    );
    expect(media.verify(`${other}.${signature}`, now)).toBe('invalid');
    const flipped = (signature.startsWith('A') ? 'B' : 'A') + signature.slice(1);
    expect(media.verify(`${payload}.${flipped}`, now)).toBe('invalid');
    expect(links({ ENCRYPTION_KEY: 'b'.repeat(64) }).verify(token, now)).toBe('invalid');
    expect(media.verify('nonsense', now)).toBe('invalid');
    expect(media.verify(`${payload}.${signature}.x`, now)).toBe('invalid');
  });

  it('opens a link signed before a key rotation while the old key is among ENCRYPTION_PREVIOUS_KEYS', () => {
    const link = { instanceId: 'i', mediaId: 'm', expires: now / 1000 + 60 };
    const before = links().sign(link);
    const rotated = links({ ENCRYPTION_KEY: 'b'.repeat(64), ENCRYPTION_PREVIOUS_KEYS: KEY });
    expect(rotated.verify(before, now)).toEqual(link);
    // New links are signed with the new key only.
    const after = rotated.sign(link);
    expect(links({ ENCRYPTION_KEY: 'b'.repeat(64) }).verify(after, now)).toEqual(link);
    expect(links().verify(after, now)).toBe('invalid');
    // The old key removed: the old link opens no more.
    expect(links({ ENCRYPTION_KEY: 'b'.repeat(64) }).verify(before, now)).toBe('invalid');
  });

  it('is used once', async () => {
    const media = links();
    const link = { instanceId: 'i', mediaId: 'm', expires: now / 1000 + 60 };
    const token = media.sign(link);
    expect(await media.use(token, link, now)).toBe(true);
    expect(await media.use(token, link, now)).toBe(false);
  });

  it('gives no URL without PUBLIC_URL', () => {
    expect(links({ PUBLIC_URL: '' }).url('i', 'm', now)).toBeNull();
  });
});
