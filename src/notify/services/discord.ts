import type { NotificationConfig } from '../../config/notifications.ts';
import type { NotifyEventKind, StoredEvent } from '../../core/events.ts';
import { fitLines, KIND_LABEL, scanLines, sections, type OutMessage } from '../message.ts';

/**
 * Discord's webhook limits (docs.discord.com, "Execute Webhook" and "Embed Limits"): what Discord answers 400 to
 * when passed. The total counts every embed's title, description, field, footer and author text together.
 */
export const DISCORD_LIMITS = { content: 2000, embeds: 10, title: 256, description: 4096, total: 6000 } as const;

const COLOR: Record<NotifyEventKind, number> = { scanned: 0x2e9d57, removed: 0x6b7785, failed: 0xd83c3e, waiting: 0xe0a526, recovered: 0x3b82c4, retrying: 0xe0a526 };

/**
 * A batch as Discord messages: one embed per kind ("Scanned (12)"), one line per scan naming the targets that
 * took it and those that failed it, so a household of ten targets reads each folder once and 200 scans are one
 * message. A message mentions the users and roles of each MENTIONS entry whose ON names one of its events
 * (autopulse: discord.rs:228-287), and allowed_mentions lets only those through: a folder named "@everyone" pings
 * no one. USERNAME and AVATAR_URL name the sender (autopulse's username and avatar_url, discord.rs:159-167).
 */
export function discordMessages(dest: NotificationConfig, events: readonly StoredEvent[]): OutMessage[] {
  // Titles, paths and answers are shown as text (escapeMarkdown), escaped after each line is cut to its length.
  const all = sections(scanLines(events, escapeMarkdown));
  const out: OutMessage[] = [];
  for (let i = 0; i < all.length; i += DISCORD_LIMITS.embeds) {
    const chunk = all.slice(i, i + DISCORD_LIMITS.embeds);
    // Every embed's text counts towards the message's 6,000: each gets its share, and at most 4,096.
    const share = Math.floor((DISCORD_LIMITS.total - 200) / chunk.length);
    const embeds = chunk.map((s) => {
      const title = `${KIND_LABEL[s.kind]}${s.lines.length > 1 ? ` (${s.lines.length})` : ''}`;
      const description = fitLines(
        s.lines.map((l) => l.text),
        Math.min(DISCORD_LIMITS.description, share - title.length),
      );
      const last = Math.max(...s.lines.flatMap((l) => l.events.map((e) => e.at)));
      return { title, description, color: COLOR[s.kind], timestamp: new Date(last).toISOString() };
    });
    const told = chunk.flatMap((s) => s.lines.flatMap((l) => l.events));
    const body = { username: dest.USERNAME, ...(dest.AVATAR_URL ? { avatar_url: dest.AVATAR_URL } : {}), ...mentions(dest, told), embeds };
    out.push({ url: dest.URL, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
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

/**
 * The mentions of a message: each MENTIONS entry whose ON names one of the message's events (autopulse's `on`,
 * per entry: discord.rs:239-241), ids once each. The content holds whole mentions only, up to Discord's 2,000.
 */
export function mentions(dest: Pick<NotificationConfig, 'MENTIONS'>, events: readonly StoredEvent[]): { content?: string; allowed_mentions: { parse: string[]; users?: string[]; roles?: string[] } } {
  const kinds = new Set(events.map((e) => e.kind));
  const on = (dest.MENTIONS ?? []).filter((m) => m.ON.some((k) => kinds.has(k)));
  const users = [...new Set(on.flatMap((m) => m.USERS))];
  const roles = [...new Set(on.flatMap((m) => m.ROLES))];
  const here = on.some((m) => m.HERE);
  const everyone = on.some((m) => m.EVERYONE);
  const parts = [...users.map((u) => `<@${u}>`), ...roles.map((r) => `<@&${r}>`), ...(here ? ['@here'] : []), ...(everyone ? ['@everyone'] : [])];
  if (!parts.length) return { allowed_mentions: { parse: [] } };
  let content = '';
  for (const p of parts) if (content.length + p.length + (content ? 1 : 0) <= DISCORD_LIMITS.content) content = content ? `${content} ${p}` : p;
  return {
    content,
    // Discord's one "everyone" parse value lets both @here and @everyone through.
    allowed_mentions: { parse: here || everyone ? ['everyone'] : [], users, roles },
  };
}
