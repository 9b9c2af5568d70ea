import { loadConfig } from '../config/load-config.js';
import { KNOWN_DEVICE_COOKIE, KnownDevices } from './known-device.js';

function devicesWith(overrides: Record<string, string> = {}): KnownDevices {
  const { config } = loadConfig({
    NODE_ENV: 'test',
    JWT_SECRET: 'known-device-spec-secret-0123456789abcdef',
    ADMIN_PASSWORD: 'known-device-spec-password',
    ...overrides,
  });
  return new KnownDevices(config);
}

/** The Cookie header a browser sends back for a Set-Cookie value. */
const sentBack = (setCookie: string) => `theme=dark; ${setCookie.split(';')[0]}`;

describe('KnownDevices', () => {
  it('knows a browser it marked, for that username only', () => {
    const devices = devicesWith();
    const cookie = sentBack(devices.setCookie('admin'));
    expect(devices.isKnown(cookie, 'admin')).toBe(true);
    expect(devices.isKnown(cookie, 'someone-else')).toBe(false);
    expect(devices.isKnown(undefined, 'admin')).toBe(false);
  });

  it('refuses a changed cookie, and forgets every device when the password or JWT secret changes', () => {
    const devices = devicesWith();
    const cookie = sentBack(devices.setCookie('admin'));
    const [expires, id, mac] = cookie.split(`${KNOWN_DEVICE_COOKIE}=`)[1].split('.');
    const later = `${KNOWN_DEVICE_COOKIE}=${Number(expires) + 1000}.${id}.${mac}`;
    expect(devices.isKnown(later, 'admin')).toBe(false);
    expect(devicesWith({ ADMIN_PASSWORD: 'a-new-admin-password' }).isKnown(cookie, 'admin')).toBe(
      false,
    );
    expect(
      devicesWith({ JWT_SECRET: 'another-known-device-secret-0123456789' }).isKnown(
        cookie,
        'admin',
      ),
    ).toBe(false);
  });

  it('marks the cookie httpOnly and same-site only, for the admin paths', () => {
    expect(devicesWith().setCookie('admin')).toMatch(
      /^mc_known_device=[^;]+; Path=\/admin; Max-Age=2592000; HttpOnly; SameSite=Strict$/,
    );
  });
});
