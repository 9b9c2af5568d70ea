/** A number's details as the platform reports them. */
export interface PhoneNumberDetails {
  id?: string;
  display_phone_number?: string;
  verified_name?: string;
  quality_rating?: string;
  messaging_limit_tier?: string;
}

/** One record of a business account's phone-number listing. */
export interface PhoneNumberRecord {
  id: string;
  display_phone_number?: string;
  verified_name?: string;
  quality_rating?: string;
  code_verification_status?: string;
  messaging_limit_tier?: string;
}

export interface RegisterRequest {
  pin: string;
}

export interface RequestCodeRequest {
  code_method: 'SMS' | 'VOICE';
  language: string;
}

/** One component of a template as the platform describes it (HEADER, BODY, FOOTER, BUTTONS). */
export interface PlatformTemplateComponent {
  type: string;
  format?: string;
  text?: string;
  example?: Record<string, unknown>;
  buttons?: Array<Record<string, unknown>>;
  [field: string]: unknown;
}

/** One template of a business account's catalogue, as the platform lists it. */
export interface PlatformTemplate {
  id: string;
  name: string;
  language: string;
  status: string;
  category?: string;
  previous_category?: string;
  parameter_format?: string;
  components?: PlatformTemplateComponent[];
  /** A string in some answers, `{ score }` in others. */
  quality_score?: string | { score?: string };
  rejected_reason?: string;
}

/** A template to create, as the platform's POST /{WABA-ID}/message_templates takes it. */
export interface PlatformTemplateDraft {
  name: string;
  language: string;
  category: string;
  parameter_format?: string;
  components: PlatformTemplateComponent[];
}

/** What the platform answers a template creation. */
export interface PlatformTemplateCreated {
  id: string;
  status: string;
  category: string;
}
