/** Polls `condition` every `intervalMs` until it holds (true), or until `ms` pass without it (false). */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  ms = 10_000,
  intervalMs = 25,
): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return true;
}

/** Polls until `condition` holds; throws after `ms`. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  ms = 10_000,
  intervalMs = 25,
): Promise<void> {
  if (!(await waitUntil(condition, ms, intervalMs))) throw new Error('timed out waiting');
}

/** Reads until `done` holds for what was read, or until `ms` pass: the last value read, either way. */
export async function readUntil<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  ms = 10_000,
  intervalMs = 25,
): Promise<T> {
  let value!: T;
  await waitUntil(async () => done((value = await read())), ms, intervalMs);
  return value;
}
