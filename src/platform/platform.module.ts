import { Global, Module } from '@nestjs/common';
import { PlatformClient } from './platform-client.service.js';

@Global()
@Module({ providers: [PlatformClient], exports: [PlatformClient] })
export class PlatformModule {}
