/** Platform object ids (numbers, accounts, apps): digits in practice; never a path separator. */
export const PLATFORM_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const PLATFORM_ID_MESSAGE = 'must be 1 to 64 letters, digits, dashes or underscores';
