import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A real terminal for interactive commands: a detached tmux session on its own server socket. The test types
 * with send-keys and reads the screen (plus scrollback) with capture-pane, waiting with bounded polls.
 */
let counter = 0;

export class Terminal {
  private readonly socket: string;
  private readonly exitFile: string;

  private constructor(socket: string, exitFile: string) {
    this.socket = socket;
    this.exitFile = exitFile;
  }

  /** Starts `command` (argv) in a 200x50 terminal, with env and cwd; the exit status is recorded. */
  static start(argv: string[], opts: { env: NodeJS.ProcessEnv; cwd: string; dir: string }): Terminal {
    const socket = `scanrelay-test-${process.pid}-${++counter}`;
    const exitFile = join(opts.dir, `exit-${counter}`);
    const script = join(opts.dir, `run-${counter}.sh`);
    const exports = Object.entries(opts.env)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `export ${k}=${shellQuote(v!)}`)
      .join('\n');
    writeFileSync(script, `${exports}\ncd ${shellQuote(opts.cwd)}\n${argv.map(shellQuote).join(' ')}\necho "$?" > ${shellQuote(exitFile)}\nsleep 600\n`);
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-x', '200', '-y', '50', `sh ${shellQuote(script)}`]);
    execFileSync('tmux', ['-L', socket, 'set-option', '-g', 'history-limit', '20000']);
    return new Terminal(socket, exitFile);
  }

  /** Everything printed so far (scrollback included), trailing blanks trimmed per line. */
  screen(): string {
    return execFileSync('tmux', ['-L', this.socket, 'capture-pane', '-p', '-J', '-S', '-20000'], { encoding: 'utf8' })
      .split('\n')
      .map((l) => l.trimEnd())
      .join('\n')
      .trimEnd();
  }

  private lastLine(): string {
    const lines = this.screen().split('\n').filter((l) => l.trim());
    return lines[lines.length - 1] ?? '';
  }

  async waitFor(predicate: (screen: string) => boolean, what: string, timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen();
      if (predicate(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; screen:\n${screen.split('\n').slice(-40).join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async waitForText(text: string | RegExp, timeoutMs?: number): Promise<string> {
    return this.waitFor((s) => (typeof text === 'string' ? s.includes(text) : text.test(s)), `text ${String(text)}`, timeoutMs);
  }

  /** Waits until the question `prompt` is the one being asked (inquirer shows "? prompt" while waiting). */
  async waitForPrompt(prompt: string, timeoutMs?: number): Promise<void> {
    await this.waitFor(() => this.lastLine().startsWith(`? ${prompt}`), `prompt "${prompt}"`, timeoutMs);
  }

  /** Types text and presses Enter. */
  type(text: string): void {
    if (text) execFileSync('tmux', ['-L', this.socket, 'send-keys', '-l', text]);
    execFileSync('tmux', ['-L', this.socket, 'send-keys', 'Enter']);
  }

  /** Clears the current input line (after a refused answer, inquirer keeps the text). */
  clearLine(): void {
    execFileSync('tmux', ['-L', this.socket, 'send-keys', 'C-u']);
  }

  private doneCount(): number {
    return this.screen().split('\n').filter((l) => l.startsWith('✔ ')).length;
  }

  /** Waits for `prompt`, answers it, and waits until the answer is accepted. */
  async answer(prompt: string, text: string): Promise<void> {
    await this.waitForPrompt(prompt);
    const before = this.doneCount();
    this.type(text);
    await this.waitFor(() => this.doneCount() > before, `the answer "${text}" to "${prompt}" to be accepted`);
  }

  /** Answers `prompt` with something that must be refused with `reason`, then clears the line. */
  async answerRefused(prompt: string, text: string, reason: string): Promise<string> {
    await this.waitForPrompt(prompt);
    this.type(text);
    const screen = await this.waitFor((s) => s.split('\n').slice(-3).some((l) => l.includes(reason)), `the refusal "${reason}"`);
    this.clearLine();
    return screen;
  }

  /** Waits for the command to end; returns its exit status. */
  async exitCode(timeoutMs = 30_000): Promise<number> {
    const { readFileSync, existsSync } = await import('node:fs');
    await this.waitFor(() => existsSync(this.exitFile) && readFileSync(this.exitFile, 'utf8').trim() !== '', 'the command to exit', timeoutMs);
    return Number(readFileSync(this.exitFile, 'utf8').trim());
  }

  close(): void {
    try {
      execFileSync('tmux', ['-L', this.socket, 'kill-server'], { stdio: 'ignore' });
    } catch {
      /* already gone */
    }
  }
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
