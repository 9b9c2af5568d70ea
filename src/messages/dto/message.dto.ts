import { ApiProperty } from '@nestjs/swagger';
import type { Message } from '../entities/message.entity.js';

export class MessageDto {
  @ApiProperty() wamid: string;
  @ApiProperty({ format: 'uuid' }) instance_id: string;
  @ApiProperty({ enum: ['outbound', 'inbound'] }) direction: string;
  @ApiProperty({ description: "The other party's wa_id" }) contact: string;
  @ApiProperty({ example: 'text' }) type: string;
  @ApiProperty({ enum: ['sent', 'delivered', 'read', 'failed', 'received'] }) status: string;
  @ApiProperty({ nullable: true, type: 'array', items: { type: 'object' } })
  errors: unknown[] | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static from(message: Message): MessageDto {
    return {
      wamid: message.wamid,
      instance_id: message.instance_id,
      direction: message.direction,
      contact: message.contact,
      type: message.type,
      status: message.status,
      errors: message.errors,
      created_at: message.created_at.toISOString(),
      updated_at: message.updated_at.toISOString(),
    };
  }
}
