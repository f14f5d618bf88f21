/**
 * Server-Sent Events framing (the WHATWG EventSource rules, reduced to what Plex sends): lines `event: x`,
 * `data: y` (several are joined with newlines), `:` comments, and a blank line that ends the event. Chunks
 * may split lines anywhere; CRLF, CR and LF all end a line.
 */
export class SseReader {
  private buffer = '';
  private event = '';
  private data: string[] = [];

  constructor(private readonly onEvent: (name: string, data: string) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      // A lone CR at the end may be the first half of CRLF: wait for the next chunk.
      if (!m || (m[0] === '\r' && m.index === this.buffer.length - 1)) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length || this.event) this.onEvent(this.event || 'message', this.data.join('\n'));
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
  }
}
