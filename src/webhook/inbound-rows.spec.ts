import {
  contactRows,
  inboundMessageRow,
  messageTime,
  statusRows,
  storableJson,
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
        contact: '5511999990000',
        type: 'text',
        body: JSON.stringify(message),
        sentAt: new Date(1795000000 * 1000),
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

  it('gives each contact its latest time, never past the arrival, and its profile', () => {
    const row = (contact: string, at: Date) => ({
      wamid: `w${at.getTime()}`,
      contact,
      type: 'text',
      body: '{}',
      sentAt: at,
    });
    const early = new Date(receivedAt.getTime() - 5000);
    const late = new Date(receivedAt.getTime() - 1000);
    const ahead = new Date(receivedAt.getTime() + 3_600_000);
    expect(
      contactRows(
        [row('1', early), row('1', late), row('2', ahead)],
        [
          { wa_id: '1', user_id: 'BR.1', profile: { name: 'Ana' } },
          { wa_id: '9', profile: { name: 'Nobody' } },
        ],
        receivedAt,
      ),
    ).toEqual([
      { waId: '1', userId: 'BR.1', name: 'Ana', lastInboundAt: late },
      { waId: '2', userId: null, name: null, lastInboundAt: receivedAt },
    ]);
  });

  it('keeps the furthest status per wamid and leaves out unknown ones', () => {
    const { rows, ignored } = statusRows([
      { id: 'w1', status: 'read', recipient_id: '55' },
      { id: 'w1', status: 'delivered', recipient_id: '55' },
      { id: 'w2', status: 'failed', errors: [{ code: 131047 }] },
      { id: 'w3', status: 'deleted' },
      null,
    ]);
    expect(ignored).toBe(2);
    expect(rows).toEqual([
      { wamid: 'w1', recipient: '55', status: 'read', errors: null },
      { wamid: 'w2', recipient: '', status: 'failed', errors: '[{"code":131047}]' },
    ]);
  });
});
