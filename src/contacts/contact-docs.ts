import { AppException } from '../common/app.exception.js';

/** The `{key}` path parameter of the contact routes, as the API description shows it. */
export const CONTACT_KEY_PARAM = {
  name: 'key',
  description: "The contact's number (wa_id) or business-scoped user id",
  example: '5511999990000',
};

export const CONTACT_NOT_FOUND = new AppException(
  'contact_not_found',
  'Contact 5511999990000 not found',
);
