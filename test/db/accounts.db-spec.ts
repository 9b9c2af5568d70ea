import { AccountStore } from '../../src/accounts/account.store.js';
import type { Account } from '../../src/accounts/account.types.js';
import { insertInstance, useMigratedDatabase } from './support.js';

/** Accounts and the instances an operator answers for. */
const context = useMigratedDatabase();
let accounts: AccountStore;

beforeAll(() => {
  accounts = new AccountStore(context.source);
});

const account = (username: string, instanceIds: string[] = []) => ({
  username,
  display_name: `Person ${username}`,
  role: 'operator' as const,
  password_hash: '$argon2id$v=19$m=19456,t=2,p=1$not-a-real-hash',
  instance_ids: instanceIds,
});

describe('AccountStore', () => {
  it('inserts an account with its instances, and finds it by id or by username in any case', async () => {
    const [a, b] = [await insertInstance(context.db), await insertInstance(context.db)];
    const created = (await accounts.insert(account('Zoe', [b, a]))) as Account;
    expect(created).toMatchObject({
      username: 'Zoe',
      role: 'operator',
      disabled_at: null,
      instance_ids: [a, b].sort(),
    });
    expect(await accounts.find(created.id)).toEqual(created);
    expect(await accounts.findByUsername('zOE')).toEqual(created);
    expect(await accounts.findByUsername('nobody')).toBeNull();
  });

  it('refuses a username taken in another case, and an instance that does not exist', async () => {
    await accounts.insert(account('Yan'));
    expect(await accounts.insert(account('YAN'))).toBe('username_taken');
    expect(await accounts.insert(account('Vera', ['00000000-0000-4000-8000-000000000000']))).toBe(
      'instance_gone',
    );
    expect(await accounts.findByUsername('vera')).toBeNull();
  });

  it('updates only what it is given; a new password moves password_changed_at; the instances are replaced', async () => {
    const instance = await insertInstance(context.db);
    const created = (await accounts.insert(account('Xavi', [instance]))) as Account;
    const renamed = (await accounts.update(created.id, { display_name: 'Xavier' })) as Account;
    expect(renamed).toMatchObject({
      display_name: 'Xavier',
      role: 'operator',
      instance_ids: [instance],
    });
    expect(renamed.password_changed_at).toEqual(created.password_changed_at);
    expect(renamed.sessions_since).toEqual(created.sessions_since);

    const changed = (await accounts.update(created.id, {
      password_hash: '$argon2id$other',
      disabled: true,
      instance_ids: [],
    })) as Account;
    expect(changed.password_changed_at.getTime()).toBeGreaterThan(
      created.password_changed_at.getTime(),
    );
    expect(changed.sessions_since.getTime()).toBeGreaterThan(created.sessions_since.getTime());
    expect(changed.disabled_at).not.toBeNull();
    expect(changed.instance_ids).toEqual([]);
    const enabled = (await accounts.update(created.id, { disabled: false })) as Account;
    expect(enabled.disabled_at).toBeNull();
    // Enabling moves nothing: the sessions the disable ended stay ended.
    expect(enabled.sessions_since).toEqual(changed.sessions_since);
    const disabled = (await accounts.update(created.id, { disabled: true })) as Account;
    expect(disabled.sessions_since.getTime()).toBeGreaterThan(enabled.sessions_since.getTime());
    expect(
      await accounts.update('00000000-0000-4000-8000-000000000000', { role: 'admin' }),
    ).toBeNull();
  });

  it('lists accounts by username; an instance deleted leaves its operators', async () => {
    const instance = await insertInstance(context.db);
    const created = (await accounts.insert(account('Wanda', [instance]))) as Account;
    await context.db.query('DELETE FROM instances WHERE id = $1', [instance]);
    expect((await accounts.find(created.id))!.instance_ids).toEqual([]);
    const names = (await accounts.list()).map((a) => a.username);
    expect(names).toEqual(
      [...names].sort((x, y) => x.toLowerCase().localeCompare(y.toLowerCase())),
    );
  });
});
