/**
 * How many random bits a secret carries, estimated the way a guesser who
 * knows the usual shapes of weak secrets would count them: the value is read
 * as the cheapest sequence of
 *
 * - single characters, each costing log2 of the alphabet the value uses
 *   (16 for hex, 10 for digits, else the sum of the classes present:
 *   lower case, upper case, digits, `-_`, `+/=`, other symbols);
 * - runs of one repeated character (`aaaa`);
 * - runs along a known order, up or down (`abcd`, `4321`, `0123…ef`, keyboard
 *   rows such as `qwerty`);
 * - words of a short list of the most guessed ones (any case, with the usual
 *   digit-for-letter swaps such as `p4ssw0rd`), and years (`1987`) in a
 *   value that is not hex or digits;
 * - repeats of an earlier part (`passwordpassword`, `abab…`).
 *
 * A random value's rare accidental run or repeat saves it a few bits; a
 * structured value collapses to a handful. Nothing here depends on how often
 * each character happens to occur, so a generated value counts close to its
 * true bits, and bounds set well below those (SECRET_MIN_BITS) do not refuse
 * it by chance.
 */
export function estimateSecretBits(value: string): number {
  // Longer values only gain bits; the cost of the search grows with the square of the length.
  const text = [...value].slice(0, MAX_ESTIMATED_LENGTH);
  const n = text.length;
  if (n === 0) return 0;
  const lower = text.map((character) => character.toLowerCase());
  const alphabet = alphabetSize(text.join(''));
  const charBits = Math.log2(alphabet);
  // A separator between words is one of a few a guesser tries.
  const separatorBits = Math.min(charBits, SEPARATOR_BITS);
  const cost = new Array<number>(n + 1).fill(Number.POSITIVE_INFINITY);
  cost[0] = 0;
  const relax = (end: number, bits: number): void => {
    if (bits < cost[end]) cost[end] = bits;
  };

  for (let i = 0; i < n; i++) {
    const here = cost[i];
    relax(i + 1, here + (SEPARATORS.includes(text[i]) ? separatorBits : charBits));

    // One character repeated.
    let run = 1;
    while (i + run < n && text[i + run] === text[i]) run++;
    for (let length = 3; length <= run; length++)
      relax(i + length, here + PATTERN_BITS + charBits + log2(length));

    // A run along a known order, up or down.
    for (const order of SEQUENCES) {
      const start = order.indexOf(lower[i]);
      if (start < 0) continue;
      for (const step of [1, -1]) {
        let length = 1;
        while (i + length < n && order[start + step * length] === lower[i + length]) length++;
        for (let l = 3; l <= length; l++) {
          relax(i + l, here + PATTERN_BITS + charBits + 1 + log2(SEQUENCES.length) + log2(l));
        }
      }
    }

    // A listed word, or a year.
    for (const first of normalised(lower[i])) {
      for (const word of WORDS_BY_FIRST.get(first) ?? []) {
        const bits = wordBits(text, lower, i, word);
        if (bits !== null) relax(i + word.length, here + PATTERN_BITS + bits);
      }
    }
    // Years (1950-2039) in a value of words and symbols; in hex or digits they are chance.
    if (
      alphabet > HEX_WITH_SEPARATORS &&
      i + 4 <= n &&
      /^(19[5-9]|20[0-3])\d$/.test(text.slice(i, i + 4).join(''))
    ) {
      relax(i + 4, here + PATTERN_BITS + YEAR_BITS);
    }

    // A repeat of an earlier part (it may overlap itself, as `abababab` does).
    let longest = 0;
    for (let from = 0; from < i; from++) {
      let length = 0;
      while (i + length < n && text[from + length] === text[i + length]) length++;
      if (length > longest) longest = length;
    }
    for (let length = 3; length <= longest; length++) {
      relax(i + length, here + PATTERN_BITS + log2(i) + log2(length));
    }
  }
  return cost[n];
}

const MAX_ESTIMATED_LENGTH = 256;
const HEX_WITH_SEPARATORS = 17;
const SEPARATORS = ['-', '_', '.', ' '];
const SEPARATOR_BITS = 2;
const YEAR_BITS = Math.log2(90);
/**
 * What naming a pattern's kind costs: without it a random value's accidental
 * `bbb` or repeated `4a1` would read as cheaper than its odds.
 */
const PATTERN_BITS = 3;

function log2(value: number): number {
  return Math.log2(Math.max(1, value));
}

/** The alphabet a value draws from, as a guesser would try it: the classes it uses. */
function alphabetSize(value: string): number {
  if (/^[0-9]+$/.test(value)) return 10;
  // Hex, in one case, maybe grouped as a UUID or a MAC address is.
  if (/^[0-9a-f]+([-:][0-9a-f]+)*$/.test(value) || /^[0-9A-F]+([-:][0-9A-F]+)*$/.test(value)) {
    return /[-:]/.test(value) ? HEX_WITH_SEPARATORS : 16;
  }
  let size = 0;
  for (const [pattern, count] of CHARACTER_CLASSES) if (pattern.test(value)) size += count;
  return size;
}

const CHARACTER_CLASSES: ReadonlyArray<readonly [RegExp, number]> = [
  [/[a-z]/, 26],
  [/[A-Z]/, 26],
  [/[0-9]/, 10],
  [/[-_]/, 2],
  [/[+/=]/, 3],
  [/[ !"#$%&'()*,.:;<>?@[\\\]^`{|}~]/, 28],
  [/[^\x20-\x7e]/, 100],
];

/** Orders a run can follow (compared in lower case). */
const SEQUENCES = [
  '0123456789abcdefghijklmnopqrstuvwxyz',
  '1234567890',
  'qwertyuiop',
  '1q2w3e4r5t6y7u8i9o0p',
  'qazwsxedcrfvtgbyhnujmikolp',
  '1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik,9ol.0p;/',
  'asdfghjkl',
  'zxcvbnm',
  'qwertzuiop',
  'azertyuiop',
  '!@#$%^&*()',
];

/** Digits and symbols that stand for letters in `p4ssw0rd`. */
const SUBSTITUTES: Readonly<Record<string, string>> = {
  '4': 'a',
  '@': 'a',
  '8': 'b',
  '3': 'e',
  '6': 'g',
  '1': 'il',
  '!': 'i',
  '0': 'o',
  '5': 's',
  $: 's',
  '7': 't',
  '2': 'z',
};

function normalised(character: string): string[] {
  return [character, ...(SUBSTITUTES[character] ?? '')];
}

/**
 * The bits of `word` read at position `at`: the word's rank in the list,
 * plus one bit for a capital or all capitals (more for mixed case) and one
 * for each swapped character; null when it is not there.
 */
function wordBits(text: string[], lower: string[], at: number, word: string): number | null {
  if (at + word.length > text.length) return null;
  let swaps = 0;
  for (let k = 0; k < word.length; k++) {
    const character = lower[at + k];
    if (character === word[k]) continue;
    if (!(SUBSTITUTES[character] ?? '').includes(word[k])) return null;
    swaps++;
  }
  const part = text.slice(at, at + word.length).join('');
  const letters = part.replace(/[^A-Za-z]/g, '');
  let caseBits = 0;
  if (letters !== letters.toLowerCase()) {
    const capitalised = letters[0] + letters.slice(1).toLowerCase() === letters;
    caseBits = capitalised || letters === letters.toUpperCase() ? 1 : letters.length;
  }
  return WORD_BITS + caseBits + swaps;
}

/**
 * The words guessers try first: the roots of the most common passwords, the
 * words a secret for this service would be made of, in English, Portuguese
 * and Spanish. Short on purpose: it catches the obvious, the length and
 * alphabet rule does the rest.
 */
const WORDS = [
  ...new Set(
    `
password passwd pass pwd admin administrator root secret secrets token key keys apikey
jwt api auth login logon user username guest test testing demo example sample default
changeme change letmein welcome hello iloveyou love trustno qwerty azerty qazwsx
monkey dragon master shadow sunshine princess football baseball soccer superman batman
starwars pokemon michael jordan hunter killer ninja mustang access freedom whatever
computer internet server service system network database postgres redis mysql docker
kubernetes cloud private public secure security safe summer winter spring autumn
company business office money bank cookie cheese chocolate coffee pizza flower orange
apple banana purple yellow silver golden gold diamond star moon angel heaven family
friend baby king queen prince tiger lion eagle bear wolf dog cat horse fish correct
horse battery staple production prod staging stage development dev local localhost
connector messaging message messenger whatsapp meta facebook instagram google
microsoft amazon azure platform agent webhook verify verification metrics prometheus
encryption encrypt crypto signing hmac random strong super temp project application
app web site online portal manager support info contact mail email team owner
january february march april june july august september october november december
monday tuesday wednesday thursday friday saturday sunday
senha segredo chave teste usuario acesso entrar brasil amor deus familia mudar trocar
exemplo padrao producao mensagem conector seguro segura forte minha meu empresa
contrasena clave secreto hola
the and for you your our this that with not long enough very much more
deadbeef cafebabe dead beef cafe babe face feed

`.split(/\s+/),
  ),
].filter((word) => word.length >= 3);

const WORD_BITS = Math.log2(WORDS.length);

/** The words by the characters that can open them (a letter, or a digit standing for it). */
const WORDS_BY_FIRST = (() => {
  const index = new Map<string, string[]>();
  for (const word of WORDS) {
    const list = index.get(word[0]) ?? [];
    list.push(word);
    index.set(word[0], list);
  }
  return index;
})();
