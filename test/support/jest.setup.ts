import 'reflect-metadata';
import { Logger } from '@nestjs/common';

// Unit specs build services without an app: keep Nest's default console logger quiet.
Logger.overrideLogger(false);
