import type { NotificationConfig } from '../../config/notifications.ts';
import type { NotifyEventKind, StoredEvent } from '../../core/events.ts';
import { eventLine, fitLines, groups, KIND_LABEL, type OutMessage } from '../message.ts';

/**
 * Discord's webhook limits (docs.discord.com, "Execute Webhook" and "Embed Limits"): what Discord answers 400 to
 * when passed. The total counts every embed's title, description, field, footer and author text together.
 */
export const DISCORD_LIMITS = { content: 2000, embeds: 10, title: 256, description: 4096, total: 6000 } as const;

const COLOR: Record<NotifyEventKind, number> = { scanned: 0x2e9d57, removed: 0x6b7785, failed: 0xd83c3e, waiting: 0xe0a526, recovered: 0x3b82c4 };

/**
 * A batch as Discord messages: one embed per kind and target ("Scanned · plex"), each event one line of its
 * description, so 200 scans are one message. More than 10 groups go on in a second message. A batch with an event
 * of MENTIONS.ON mentions its users and roles (autopulse: discord.rs:228-287), and allowed_mentions lets only those
 * through: a folder named "@everyone" pings no one.
 */
export function discordMessages(dest: NotificationConfig, events: readonly StoredEvent[]): OutMessage[] {
  const all = groups(events);
  const out: OutMessage[] = [];
  for (let i = 0; i < all.length; i += DISCORD_LIMITS.embeds) {
    const chunk = all.slice(i, i + DISCORD_LIMITS.embeds);
    // Every embed's text counts towards the message's 6,000: each gets its share, and at most 4,096.
    const share = Math.floor((DISCORD_LIMITS.total - 200) / chunk.length);
    const embeds = chunk.map((g) => {
      const title = escapeMarkdown(`${KIND_LABEL[g.kind]}${g.target ? ` · ${g.target}` : ''}${g.events.length > 1 ? ` (${g.events.length})` : ''}`).slice(0, DISCORD_LIMITS.title);
      const description = fitLines(g.events.map((e) => escapeMarkdown(eventLine(e))), Math.min(DISCORD_LIMITS.description, share - title.length));
      return { title, description, color: COLOR[g.kind], timestamp: new Date(g.events.at(-1)!.at).toISOString() };
    });
    out.push({ url: dest.URL, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: dest.USERNAME, ...mentions(dest, chunk.flatMap((g) => g.events)), embeds }) });
  }
  return out;
}

/**
 * Text from titles, paths and servers' answers, shown as it is: Discord's markdown would make
 * `[Plex token expired](https://evil.example)` a link and a line starting with `#` a heading. Every character
 * markdown gives a meaning (the brackets of a link, whose parentheses then mean nothing; the ':' of a bare URL,
 * which Discord links by itself; a list's mark where a line starts) is escaped with a backslash, which Discord
 * drops when it renders.
 */
export function escapeMarkdown(text: string): string {
  return (
    text
      .replace(/[\\`*_~|<>[\]#]/g, (c) => `\\${c}`)
      // A bare URL: Discord links it by itself.
      .replace(/:\/\//g, '\\://')
      // A list ("- x", "+ x", "1. x") or subtext ("-# x") where a line starts.
      .replace(/^(\s*)([-+]|\d+\.)/gm, (_m, space: string, mark: string) => `${space}${mark.replace(/[-+.]/, (c) => `\\${c}`)}`)
  );
}

function mentions(dest: NotificationConfig, events: readonly StoredEvent[]): { content?: string; allowed_mentions: { parse: string[]; users?: string[]; roles?: string[] } } {
  const m = dest.MENTIONS;
  if (!m || !events.some((e) => m.ON.includes(e.kind))) return { allowed_mentions: { parse: [] } };
  const parts = [...m.USERS.map((u) => `<@${u}>`), ...m.ROLES.map((r) => `<@&${r}>`), ...(m.HERE ? ['@here'] : []), ...(m.EVERYONE ? ['@everyone'] : [])];
  if (!parts.length) return { allowed_mentions: { parse: [] } };
  return {
    content: parts.join(' ').slice(0, DISCORD_LIMITS.content),
    // Discord's one "everyone" parse value lets both @here and @everyone through.
    allowed_mentions: { parse: m.HERE || m.EVERYONE ? ['everyone'] : [], users: m.USERS, roles: m.ROLES },
  };
}
