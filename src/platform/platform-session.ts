import type { MediaDownload, MediaUpload, PlatformClient } from './platform-client.js';
import type { PlatformMessage } from './platform-message.js';
import type {
  PhoneNumberDetails,
  PhoneNumberRecord,
  RegisterRequest,
  RequestCodeRequest,
} from './platform.types.js';

/** Which number a session acts for, and with what token. */
export interface PlatformCredentials {
  phoneNumberId: string;
  channelAccountId: string;
  /** The decrypted access token. */
  token: string;
}

/**
 * The platform calls of one business number, bound to its credentials once
 * (as a provider is built with its credentials), so callers never handle the
 * token. The token is a private field: it does not serialize or log.
 */
export class PlatformSession {
  readonly phoneNumberId: string;
  readonly channelAccountId: string;
  readonly #token: string;

  constructor(
    private readonly client: PlatformClient,
    credentials: PlatformCredentials,
  ) {
    this.phoneNumberId = credentials.phoneNumberId;
    this.channelAccountId = credentials.channelAccountId;
    this.#token = credentials.token;
  }

  phoneNumber(): Promise<PhoneNumberDetails> {
    return this.client.getPhoneNumber(this.phoneNumberId, this.#token);
  }

  /** The business account's numbers. */
  phoneNumbers(): Promise<PhoneNumberRecord[]> {
    return this.client.listPhoneNumbers(this.channelAccountId, this.#token);
  }

  register(request: RegisterRequest): Promise<void> {
    return this.client.register(this.phoneNumberId, this.#token, request);
  }

  requestCode(request: RequestCodeRequest): Promise<void> {
    return this.client.requestCode(this.phoneNumberId, this.#token, request);
  }

  verifyCode(code: string): Promise<void> {
    return this.client.verifyCode(this.phoneNumberId, this.#token, code);
  }

  /** Sends one message; its wamid. */
  sendMessage(message: PlatformMessage): Promise<string> {
    return this.client.sendMessage(this.phoneNumberId, this.#token, message);
  }

  markReadWithTyping(wamid: string): Promise<void> {
    return this.client.markReadWithTyping(this.phoneNumberId, this.#token, wamid);
  }

  uploadMedia(upload: MediaUpload): Promise<string> {
    return this.client.uploadMedia(this.phoneNumberId, this.#token, upload);
  }

  downloadMedia(mediaId: string): Promise<MediaDownload> {
    return this.client.downloadMedia(mediaId, this.#token, this.phoneNumberId);
  }
}
