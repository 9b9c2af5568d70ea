import { sqlFunction, type SqlObject } from '../database/sql-objects.js';

/** The channel the triggers notify and the api processes listen on. */
export const LIVE_CHANNEL = 'mc_live';

/**
 * Ids per notification: a notification carries at most 8000 bytes, and an id
 * takes 39 of them in the JSON array.
 */
export const LIVE_IDS_PER_NOTICE = 150;

/**
 * What tells the api processes that rows changed, for their live streams
 * (live/): a notification on `mc_live` per instance watched (live_listeners)
 * and per LIVE_IDS_PER_NOTICE rows, `{ "k": kind, "i": instance, "ids": [...] }`.
 * PostgreSQL delivers it when the writing transaction commits, and never for
 * one that rolls back, so a stream shows only what is stored.
 */
export const LIVE_SQL: SqlObject[] = [
  sqlFunction(
    'mc_live_notify',
    `
CREATE OR REPLACE FUNCTION mc_live_notify(kind text, instance_ids uuid[], ids uuid[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM live_listeners) THEN
    RETURN;
  END IF;
  PERFORM pg_notify('${LIVE_CHANNEL}', jsonb_build_object(
    'k', kind, 'i', r.instance_id, 'ids', jsonb_agg(r.id ORDER BY r.n))::text)
  FROM (SELECT u.instance_id, u.id, u.n,
          (row_number() OVER (PARTITION BY u.instance_id ORDER BY u.n) - 1)
            / ${LIVE_IDS_PER_NOTICE} AS chunk
        FROM unnest(instance_ids, ids) WITH ORDINALITY AS u(instance_id, id, n)
        WHERE u.instance_id IN (SELECT l.instance_id FROM live_listeners l
                                WHERE l.expires_at > now())) r
  GROUP BY r.instance_id, r.chunk;
END $$`,
  ),
];
