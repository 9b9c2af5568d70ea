import {
  identityRows,
  inboundMessageRow,
  messageTime,
  statusRows,
  storableJson,
  type InboundMessageRow,
} from './inbound-rows.js';

const receivedAt = new Date('2026-11-23T12:00:00Z');
const seconds = (date: Date) => String(Math.floor(date.getTime() / 1000));

describe('inbound rows', () => {
  it('keeps a good message as it came', () => {
    const message = {
      from: '5511999990000',
      id: 'wamid.1',
      timestamp: '1795000000',
      type: 'text',
      text: { body: 'oi' },
    };
    const parsed = inboundMessageRow(message, receivedAt);
    expect(parsed).toEqual({
      ok: true,
      row: {
        wamid: 'wamid.1',
        address: '5511999990000',
        waId: '5511999990000',
        userId: null,
        parentUserId: null,
        type: 'text',
        body: JSON.stringify(message),
        sentAt: new Date(1795000000 * 1000),
        receivedAt,
        change: undefined,
        // Short texts carry their words, upper-cased, for the stop and start words.
        word: 'OI',
      },
    });
  });

  it('refuses a message with no usable id or sender, and only those', () => {
    expect(inboundMessageRow({ from: '55', type: 'text' }, receivedAt)).toEqual({
      ok: false,
      reason: 'no usable id',
    });
    expect(inboundMessageRow({ id: 'wamid.2', type: 'text' }, receivedAt)).toEqual({
      ok: false,
      reason: 'no usable sender',
    });
    expect(inboundMessageRow({ id: 'x'.repeat(257), from: '55' }, receivedAt)).toMatchObject({
      ok: false,
    });
    expect(inboundMessageRow({ id: 'wamid.3', from: '5'.repeat(33) }, receivedAt)).toMatchObject({
      ok: false,
    });
    expect(inboundMessageRow(null, receivedAt)).toMatchObject({ ok: false });
    expect(
      inboundMessageRow({ id: 'wamid.4', from: '55', type: { no: 1 } }, receivedAt),
    ).toMatchObject({
      ok: true,
      row: { type: 'unknown' },
    });
  });

  it('falls back to the arrival time for an impossible timestamp', () => {
    expect(messageTime('99999999999999999', receivedAt)).toEqual(receivedAt);
    expect(messageTime('not a number', receivedAt)).toEqual(receivedAt);
    expect(messageTime('1', receivedAt)).toEqual(receivedAt);
    expect(messageTime(undefined, receivedAt)).toEqual(receivedAt);
    const earlier = new Date(receivedAt.getTime() - 60_000);
    expect(messageTime(seconds(earlier), receivedAt)).toEqual(earlier);
  });

  it('writes JSON that jsonb accepts: no NUL, no lone surrogate', () => {
    const json = storableJson({ text: { body: 'a\u0000b\ud800c' }, ok: 'é😀' });
    expect(JSON.parse(json)).toEqual({ text: { body: 'ab\ufffdc' }, ok: 'é😀' });
    const plain = { body: 'nothing to change 😀' };
    expect(storableJson(plain)).toBe(JSON.stringify(plain));
  });

  it('takes a sender who hides the number by its user id', () => {
    const parsed = inboundMessageRow(
      { id: 'wamid.u', from_user_id: 'BR.ABC123', timestamp: '1795000000', type: 'text' },
      receivedAt,
    );
    expect(parsed).toMatchObject({
      ok: true,
      row: { address: 'BR.ABC123', waId: null, userId: 'BR.ABC123' },
    });
  });

  it('reads the new keys of a number or user-id change', () => {
    const numberChange = inboundMessageRow(
      {
        id: 'wamid.s1',
        from: '5511000000001',
        type: 'system',
        system: {
          type: 'user_changed_number',
          wa_id: '5511000000002',
          user_id: 'BR.NEW',
          previous_user_id: 'BR.OLD',
        },
      },
      receivedAt,
    );
    expect(numberChange).toMatchObject({
      ok: true,
      row: {
        change: {
          old: { waId: '5511000000001', userId: 'BR.OLD' },
          new: { waId: '5511000000002', userId: 'BR.NEW', parentUserId: null },
        },
      },
    });
    const idChange = inboundMessageRow(
      {
        id: 'wamid.s2',
        from_user_id: 'BR.NEW2',
        type: 'system',
        system: { type: 'user_changed_user_id', previous_user_id: 'BR.OLD2' },
      },
      receivedAt,
    );
    expect(idChange).toMatchObject({
      ok: true,
      row: { change: { old: { waId: null, userId: 'BR.OLD2' }, new: { userId: 'BR.NEW2' } } },
    });
    const otherSystem = inboundMessageRow(
      {
        id: 'wamid.s3',
        from: '551100',
        type: 'system',
        system: { type: 'customer_identity_changed' },
      },
      receivedAt,
    );
    expect(otherSystem).toMatchObject({ ok: true, row: { change: undefined } });
  });

  it('gives each identity its latest time, never past the arrival, and its profile', () => {
    const row = (waId: string | null, userId: string | null, at: Date): InboundMessageRow => ({
      wamid: `w${at.getTime()}`,
      address: (waId ?? userId)!,
      waId,
      userId,
      parentUserId: null,
      type: 'text',
      body: '{}',
      sentAt: at,
      receivedAt,
    });
    const early = new Date(receivedAt.getTime() - 5000);
    const late = new Date(receivedAt.getTime() - 1000);
    const ahead = new Date(receivedAt.getTime() + 3_600_000);
    expect(
      identityRows(
        [
          row('1', null, early),
          row('1', null, late),
          row('2', null, ahead),
          row(null, 'BR.X', early),
        ],
        [
          { wa_id: '1', user_id: 'BR.1', parent_user_id: 'BR.P', profile: { name: 'Ana' } },
          { user_id: 'BR.X', profile: { name: 'Hidden', username: 'hidden_one' } },
          { wa_id: '9', profile: { name: 'Nobody' } },
        ],
      ),
    ).toEqual([
      {
        key: '1|BR.1',
        waId: '1',
        userId: 'BR.1',
        parentUserId: 'BR.P',
        username: null,
        name: 'Ana',
        lastInboundAt: late,
      },
      {
        key: '2|',
        waId: '2',
        userId: null,
        parentUserId: null,
        username: null,
        name: null,
        lastInboundAt: receivedAt,
      },
      {
        key: '|BR.X',
        waId: null,
        userId: 'BR.X',
        parentUserId: null,
        username: 'hidden_one',
        name: 'Hidden',
        lastInboundAt: early,
      },
    ]);
  });

  it('keeps the furthest status per wamid and leaves out unknown ones', () => {
    const { rows, ignored } = statusRows([
      { id: 'w1', status: 'read', recipient_id: '55' },
      { id: 'w1', status: 'delivered', recipient_id: '55' },
      { id: 'w2', status: 'failed', errors: [{ code: 131047 }] },
      { id: 'w4', status: 'delivered', recipient_user_id: 'BR.9' },
      { id: 'w3', status: 'deleted' },
      null,
    ]);
    expect(ignored).toBe(2);
    expect(rows).toEqual([
      { wamid: 'w1', recipient: '55', status: 'read', errors: null },
      { wamid: 'w2', recipient: '', status: 'failed', errors: '[{"code":131047}]' },
      { wamid: 'w4', recipient: 'BR.9', status: 'delivered', errors: null },
    ]);
  });
});
