import type { NotificationConfig, NotificationType } from '../../config/notifications.ts';
import type { StoredEvent } from '../../core/events.ts';
import type { OutMessage } from '../message.ts';
import { discordMessages } from './discord.ts';
import { jsonMessages } from './json.ts';
import { appriseMessages, gotifyMessages, hookshotMessages, ntfyMessages } from './text.ts';

/** Each service's messages for a batch, within that service's limits. */
export const FORMATS: Record<NotificationType, (dest: NotificationConfig, events: readonly StoredEvent[]) => OutMessage[]> = {
  discord: discordMessages,
  json: jsonMessages,
  hookshot: hookshotMessages,
  apprise: appriseMessages,
  ntfy: ntfyMessages,
  gotify: gotifyMessages,
};
