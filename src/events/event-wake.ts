import { Injectable } from '@nestjs/common';

/**
 * Tells this process's event dispatcher that new events were just committed
 * (the pipeline stored messages or recorded a send), so it looks at once
 * instead of at its next poll. Only a hint: the poll finds them anyway.
 */
@Injectable()
export class EventWake {
  private listener?: () => void;

  listen(listener: () => void): void {
    this.listener = listener;
  }

  notify(): void {
    this.listener?.();
  }
}
