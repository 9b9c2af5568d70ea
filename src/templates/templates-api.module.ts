import { Module } from '@nestjs/common';
import { TemplatesController } from './templates.controller.js';
import { TemplatesModule } from './templates.module.js';

/** The catalogue's routes (APP_ROLE all or api). */
@Module({ imports: [TemplatesModule], controllers: [TemplatesController] })
export class TemplatesApiModule {}
