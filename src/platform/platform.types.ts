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
