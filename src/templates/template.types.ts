import type { PlatformTemplateComponent } from '../platform/platform.types.js';
import type { ParameterFormat } from './template-params.js';

/** What changed, as a template event tells it. */
export type TemplateChange = 'status' | 'quality' | 'category';

/** A template event as the platform sent it, made storable. */
export interface TemplateEvent {
  /** The business account (the delivery's entry id). */
  channelAccountId: string;
  templateId: string;
  templateName: string | null;
  templateLanguage: string | null;
  /** A status change (the default), a quality change or a category change (announced or made). */
  change?: TemplateChange;
  /** APPROVED, REJECTED, PAUSED, … for a status; the new score or category for the others. */
  event: string;
  reason: string | null;
  quality?: string | null;
  category?: string | null;
  previousCategory?: string | null;
  /** A category change the platform announced, not made yet. */
  announced?: boolean;
  at: Date;
}

/** A template of a business account's catalogue, as the platform last described it. */
export interface CatalogueTemplate {
  id: string;
  channelAccountId: string;
  name: string | null;
  language: string | null;
  /** APPROVED, PENDING, REJECTED, PAUSED, DISABLED, … */
  status: string;
  category: string | null;
  components: PlatformTemplateComponent[] | null;
  parameterFormat: ParameterFormat | null;
  quality: string | null;
  /** Why it was rejected or paused, when the platform said. */
  reason: string | null;
  previousCategory: string | null;
  /** The category the platform announced it will move the template to. */
  pendingCategory: string | null;
  statusAt: Date;
  syncedAt: Date | null;
  updatedAt: Date;
}

/** A template as a catalogue sync writes it. */
export interface SyncedTemplate {
  id: string;
  name: string;
  language: string;
  status: string;
  category: string | null;
  components: PlatformTemplateComponent[];
  parameterFormat: ParameterFormat;
  quality: string | null;
  reason: string | null;
  previousCategory: string | null;
}

/** GET /templates' filters. */
export interface TemplateFilter {
  namePrefix?: string;
  language?: string;
  status?: string;
  category?: string;
}
