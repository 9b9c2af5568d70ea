import { createHash, timingSafeEqual } from 'node:crypto';

/** Compares two secrets in constant time whatever their lengths (hashing evens them out). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
