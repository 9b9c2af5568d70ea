import { splitReply } from './reply-splitter.js';

describe('splitReply', () => {
  it('keeps a short reply whole', () => {
    expect(splitReply('Hello there.')).toEqual(['Hello there.']);
  });

  it('cuts at a paragraph break first', () => {
    const first = 'a'.repeat(30);
    const second = 'b'.repeat(30);
    expect(splitReply(`${first}.\n\n${second}. More.`, 40)).toEqual([
      `${first}.`,
      `${second}. More.`,
    ]);
  });

  it('then at a sentence end, then at a word, never over the limit, losing nothing', () => {
    const sentences = Array.from(
      { length: 200 },
      (_, i) => `Sentence number ${i} says something.`,
    ).join(' ');
    const parts = splitReply(sentences, 100);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(100);
      expect(part.endsWith('.')).toBe(true);
    }
    expect(parts.join(' ')).toBe(sentences);

    const words = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    const wordParts = splitReply(words, 50);
    for (const part of wordParts) expect(part.length).toBeLessThanOrEqual(50);
    expect(wordParts.join(' ')).toBe(words);
  });

  it('cuts anywhere when there is no boundary, and splits the platform limit by default', () => {
    expect(splitReply('x'.repeat(25), 10)).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
    const long = 'Palavra '.repeat(1200);
    const parts = splitReply(long);
    expect(parts.length).toBe(3);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(4096);
  });
});
