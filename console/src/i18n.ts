import i18next from 'i18next';
import { signal } from '@preact/signals';
import en from './locales/en.json';
import ptBR from './locales/pt-BR.json';

export const LANGUAGES = [
  { code: 'en', name: 'English' },
  { code: 'pt-BR', name: 'Português (Brasil)' },
] as const;
export type Language = (typeof LANGUAGES)[number]['code'];

/** The chosen language is a preference, not a secret: it may live in localStorage. */
const STORED = 'console.language';

/** The browser's first language this console speaks; English otherwise. */
function preferred(): Language {
  const stored = localStorage.getItem(STORED);
  if (stored === 'en' || stored === 'pt-BR') return stored;
  for (const wanted of navigator.languages) {
    if (wanted.toLowerCase().startsWith('pt')) return 'pt-BR';
    if (wanted.toLowerCase().startsWith('en')) return 'en';
  }
  return 'en';
}

/** The language now: components that read it re-render when it changes. */
export const language = signal<Language>(preferred());

await i18next.init({
  lng: language.value,
  fallbackLng: 'en',
  resources: { en: { translation: en }, 'pt-BR': { translation: ptBR } },
  // Preact escapes what it renders: i18next must not escape it first.
  interpolation: { escapeValue: false },
});
document.documentElement.lang = language.value;

export function setLanguage(next: Language): void {
  localStorage.setItem(STORED, next);
  void i18next.changeLanguage(next);
  document.documentElement.lang = next;
  language.value = next;
}

/** A translated text. Reading `language` ties the caller's render to it. */
export function t(key: string, values?: Record<string, unknown>): string {
  void language.value;
  return i18next.t(key, values ?? {});
}

/** A date and time as the chosen language writes it. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  const today = new Date().toDateString() === date.toDateString();
  return new Intl.DateTimeFormat(language.value, {
    ...(today ? {} : { day: 'numeric', month: 'short' }),
    hour: '2-digit',
    minute: '2-digit',
  }).format(date);
}

/** A size in bytes, as people read it. */
export function size(bytes: number): string {
  const units = ['byte', 'kilobyte', 'megabyte', 'gigabyte'] as const;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return new Intl.NumberFormat(language.value, {
    style: 'unit',
    unit: units[unit],
    unitDisplay: 'short',
    maximumFractionDigits: unit === 0 ? 0 : 1,
  }).format(value);
}
