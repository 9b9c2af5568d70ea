/** A client API key (a row of `api_keys`). Only its SHA-256 hash is kept; the key itself is shown once. */
export interface ApiKey {
  id: string;
  name: string;
  /** Set: the key works for this instance only. Deleted with the instance. */
  instance_id: string | null;
  key_hash: string;
  /** The first characters of the key, so an admin can tell keys apart. */
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
}
