import { SendInteractiveDto } from './dto/send-interactive.dto.js';
import {
  SendAudioDto,
  SendContactsDto,
  SendDocumentDto,
  SendImageDto,
  SendLocationDto,
  SendReactionDto,
  SendStickerDto,
  SendTextDto,
  SendVideoDto,
} from './dto/send-simple.dto.js';
import { SendTemplateDto } from './dto/send-template.dto.js';

/**
 * The /send API: each kind (the route `/send/{kind}`, and a `send` value in
 * the agent's replies) and its validated body class. Adding a message type
 * starts here.
 */
export const SEND_DTO_CLASSES = {
  text: SendTextDto,
  image: SendImageDto,
  document: SendDocumentDto,
  audio: SendAudioDto,
  video: SendVideoDto,
  sticker: SendStickerDto,
  location: SendLocationDto,
  contacts: SendContactsDto,
  reaction: SendReactionDto,
  template: SendTemplateDto,
  interactive: SendInteractiveDto,
} as const;

export type SendKind = keyof typeof SEND_DTO_CLASSES;

/** The request of each kind, in the spec's terms. */
export type SendRequests = { [K in SendKind]: InstanceType<(typeof SEND_DTO_CLASSES)[K]> };

export const SEND_KINDS = Object.keys(SEND_DTO_CLASSES) as SendKind[];

/** A validated body of a kind without whom it goes to: an agent's reply names no recipient. */
export type SendContent<K extends SendKind = SendKind> = Omit<
  SendRequests[K],
  'to' | 'recipient' | 'instance_id'
>;

/** A validated message of some kind, tagged with it: what the agent's reply parts hold. */
export type SendMessage = { [K in SendKind]: { kind: K; body: SendContent<K> } }[SendKind];
