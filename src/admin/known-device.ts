import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { credentialsStamp } from '../auth/jwt.strategy.js';
import { readCookie } from '../common/cookies.js';

export const KNOWN_DEVICE_COOKIE = 'mc_known_device';
/** How long a browser stays known after its last successful login. */
export const KNOWN_DEVICE_TTL_SECONDS = 30 * 24 * 60 * 60;
/** Sent to the login and to the queue dashboard, both under /admin. */
const COOKIE_PATH = '/admin';

/**
 * The "known device" cookie: a browser that logged in as a username before
 * gets a signed, expiring mark of it, so guessers pacing that username
 * elsewhere do not slow it (the per-address limits still apply, and 5
 * failures with one cookie's id make it unknown again). It proves a
 * past login only: it never authenticates anything by itself. Signed with a
 * key derived from JWT_SECRET and bound to the username and the current
 * credentials, so a password change forgets every device.
 */
@Injectable()
export class KnownDevices {
  private readonly key: Buffer;

  constructor(private readonly config: AppConfig) {
    this.key = Buffer.from(
      hkdfSync('sha256', config.JWT_SECRET, '', 'messaging-connector known device', 32),
    );
  }

  /** A Set-Cookie value marking this browser as known for `username`. */
  setCookie(username: string): string {
    const expires = Math.floor(Date.now() / 1000) + KNOWN_DEVICE_TTL_SECONDS;
    const id = randomBytes(9).toString('base64url');
    const value = `${expires}.${id}.${this.mac(username, expires, id)}`;
    const attributes = [
      `${KNOWN_DEVICE_COOKIE}=${value}`,
      `Path=${COOKIE_PATH}`,
      `Max-Age=${KNOWN_DEVICE_TTL_SECONDS}`,
      'HttpOnly',
      'SameSite=Strict',
    ];
    if (this.config.isProduction) attributes.push('Secure');
    return attributes.join('; ');
  }

  /** Whether the request's Cookie header holds an unexpired mark for `username`. */
  isKnown(cookieHeader: string | undefined, username: string): boolean {
    return this.knownId(cookieHeader, username) !== undefined;
  }

  /**
   * The random id of the request's unexpired mark for `username`, if it holds
   * one: failures are counted per id, so a stolen cookie stops skipping the
   * pace after a few wrong passwords (LoginThrottleService).
   */
  knownId(cookieHeader: string | undefined, username: string): string | undefined {
    const value = readCookie(cookieHeader, KNOWN_DEVICE_COOKIE);
    const [expiresText = '', id = '', mac = '', ...rest] = (value ?? '').split('.');
    const expires = Number(expiresText);
    if (rest.length > 0 || !/^\d+$/.test(expiresText) || id === '') return undefined;
    if (expires <= Date.now() / 1000) return undefined;
    const expected = Buffer.from(this.mac(username, expires, id));
    const given = Buffer.from(mac);
    return given.length === expected.length && timingSafeEqual(given, expected) ? id : undefined;
  }

  private mac(username: string, expires: number, id: string): string {
    return createHmac('sha256', this.key)
      .update(`${username}\0${credentialsStamp(this.config)}\0${expires}\0${id}`)
      .digest('base64url');
  }
}
