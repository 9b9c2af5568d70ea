#!/usr/bin/env bash
# The query plans of GET /contacts and a conversation at 10 million messages:
#   npm run build && bash bench/conversation-plans.sh [messages] [contacts]
# Creates a database of its own (dropped at the end), fills it with triggers off
# (bulk load), and prints EXPLAIN ANALYZE of each query the routes run.
set -euo pipefail
MESSAGES=${1:-10000000}
CONTACTS=${2:-100000}
ADMIN=${ADMIN_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}
DB=mc_plans_$RANDOM
URL=${ADMIN%/*}/$DB
psql "$ADMIN" -qc "CREATE DATABASE $DB"
trap 'psql "$ADMIN" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)"' EXIT
NODE_ENV=development DATABASE_URL=$URL node dist/migrate.js >/dev/null
psql "$URL" -q <<SQL
SET session_replication_role = replica; -- bulk load: no event triggers
INSERT INTO instances (id, name, phone_number_id, channel_account_id, access_token_encrypted,
  token_type, webhook_verify_token)
VALUES ('00000000-0000-4000-8000-000000000001', 'plans', '1', '1', 'x', 'oauth', 'v');
INSERT INTO contacts (id, instance_id, wa_id, name, last_inbound_at, last_outbound_at)
SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid,
  '00000000-0000-4000-8000-000000000001', (5511900000000 + n)::text, 'Name ' || n,
  now() - (n || ' seconds')::interval, now() - (n || ' seconds')::interval - interval '1 minute'
FROM generate_series(1, $CONTACTS) n;
-- One contact with a tenth of all messages (a long-lived conversation), the rest spread out.
INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body, status,
  created_at, received_at)
SELECT '00000000-0000-4000-8000-000000000001', 'wamid.p' || n,
  CASE WHEN n % 2 = 0 THEN 'inbound' ELSE 'outbound' END, '5511900000001',
  ('00000000-0000-4000-8000-' || lpad(to_hex(CASE WHEN n % 10 = 0 THEN 1 ELSE 1 + n % $CONTACTS END), 12, '0'))::uuid,
  'text', '{"text":{"body":"hi"}}', CASE WHEN n % 2 = 0 THEN 'received' ELSE 'read' END,
  now() - ((${MESSAGES} - n) || ' seconds')::interval, now()
FROM generate_series(1, $MESSAGES) n;
ANALYZE;
SQL
C1="'00000000-0000-4000-8000-000000000001'"
explain() { echo; echo "== $1"; psql "$URL" -Atc "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $2"; }
explain "GET /contacts (first page)" \
  "SELECT c.* FROM contacts c WHERE c.instance_id = $C1 ORDER BY c.last_activity_at DESC, c.id DESC LIMIT 21"
explain "GET /contacts (a page deep in, by cursor)" \
  "SELECT c.* FROM contacts c WHERE c.instance_id = $C1 AND (c.last_activity_at, c.id) < (now() - interval '50000 seconds', '00000000-0000-4000-8000-000000000000') ORDER BY c.last_activity_at DESC, c.id DESC LIMIT 21"
explain "GET /contacts?q=551190000123 (number prefix)" \
  "SELECT c.* FROM contacts c WHERE c.instance_id = $C1 AND c.wa_id LIKE '551190000123%' ORDER BY c.last_activity_at DESC, c.id DESC LIMIT 21"
explain "GET /contacts?q=name 99 (name prefix)" \
  "SELECT c.* FROM contacts c WHERE c.instance_id = $C1 AND lower(c.name) LIKE 'name 99%' ORDER BY c.last_activity_at DESC, c.id DESC LIMIT 21"
explain "GET /contacts/{key}/messages: the latest 50 of a contact with $((MESSAGES / 10)) messages" \
  "SELECT * FROM messages WHERE contact_id = $C1 AND (NULL::bigint IS NULL) ORDER BY seq DESC LIMIT 51"
explain "... before a cursor halfway back" \
  "SELECT * FROM messages WHERE contact_id = $C1 AND seq < $((MESSAGES / 2)) ORDER BY seq DESC LIMIT 51"
explain "... after a cursor (following new messages)" \
  "SELECT * FROM messages WHERE contact_id = $C1 AND seq > $((MESSAGES - 100)) ORDER BY seq LIMIT 51"
