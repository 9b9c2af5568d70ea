import { Global, Module } from '@nestjs/common';
import { PlatformClient } from './platform-client.js';

@Global()
@Module({ providers: [PlatformClient], exports: [PlatformClient] })
export class PlatformModule {}
