import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { SEND_DTO_CLASSES, SEND_KINDS } from './send-kinds.js';
import { INTERACTIVE_EXAMPLES, SEND_EXAMPLES } from './send-examples.js';

describe('the documented /send examples', () => {
  it.each(SEND_KINDS)('%s passes its own validation', async (kind) => {
    const dto = plainToInstance(SEND_DTO_CLASSES[kind] as new () => object, SEND_EXAMPLES[kind]);
    expect(await validate(dto, { whitelist: true, forbidNonWhitelisted: true })).toEqual([]);
  });

  it.each(Object.keys(INTERACTIVE_EXAMPLES))('interactive %s passes validation', async (name) => {
    const dto = plainToInstance(SEND_DTO_CLASSES.interactive, INTERACTIVE_EXAMPLES[name]);
    expect(await validate(dto, { whitelist: true, forbidNonWhitelisted: true })).toEqual([]);
  });
});
