import { CAMPAIGN_SQL } from './campaigns/campaign.triggers.sql.js';
import { CONTACT_SQL } from './contacts/contact.functions.sql.js';
import type { SqlObject } from './database/sql-objects.js';
import { EVENT_SQL } from './events/event.triggers.sql.js';
import { HISTORY_SQL } from './history/history.triggers.sql.js';
import { INSTANCE_SQL } from './instances/instance.triggers.sql.js';
import { LIVE_SQL } from './live/live.functions.sql.js';
import { MESSAGE_SQL } from './messages/message.triggers.sql.js';
import { TEMPLATE_SQL } from './templates/template.triggers.sql.js';
import { TURN_SQL } from './turns/turn.triggers.sql.js';

/**
 * Every function and trigger the database should hold, each defined beside
 * the store of its table. `npm run sql:migration` writes a migration from the
 * difference to the migrated schema; test/db checks that none is left.
 */
export const SCHEMA_SQL: SqlObject[] = [
  ...EVENT_SQL,
  ...CONTACT_SQL,
  ...MESSAGE_SQL,
  ...TURN_SQL,
  ...TEMPLATE_SQL,
  ...INSTANCE_SQL,
  ...LIVE_SQL,
  ...CAMPAIGN_SQL,
  ...HISTORY_SQL,
];
