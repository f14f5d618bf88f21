/**
 * `npm run bench`: every benchmark in one run on this machine, each printing a table and a JSON line.
 * Figures only; nothing here asserts on time. Select with BENCH_ONLY=intake,coalesce,memory,drive,crypt,hardening,patterns,queue,idle,targets,list,jellyfin,stats,reads.
 */
import { benchAutopulseList } from './autopulse-list.ts';
import { benchCoalesce } from './coalesce.ts';
import { benchCrypt } from './crypt.ts';
import { benchDrive } from './drive.ts';
import { benchHardening } from './hardening.ts';
import { benchIntake } from './intake.ts';
import { benchJellyfinModes } from './jellyfin-modes.ts';
import { benchMemoryDrain } from './memory-drain.ts';
import { benchPatterns } from './patterns.ts';
import { benchPgIdle } from './pg-idle.ts';
import { benchSharedQueue } from './shared-queue.ts';
import { benchStats } from './stats.ts';
import { benchTargetsDrain } from './targets-drain.ts';
import { benchTrustReads } from './trust-reads.ts';

const only = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);
const want = (name: string) => only.length === 0 || only.includes(name);

const started = Date.now();
const summary: Record<string, unknown> = {};
if (want('intake')) summary.intake = await benchIntake();
if (want('coalesce')) summary.coalesce = await benchCoalesce();
if (want('memory')) summary.memory = await benchMemoryDrain();
if (want('drive')) summary.drive = await benchDrive();
if (want('crypt')) summary.crypt = await benchCrypt();
if (want('hardening')) summary.hardening = await benchHardening();
if (want('patterns')) summary.patterns = await benchPatterns();
if (want('queue')) summary.queue = await benchSharedQueue();
if (want('idle')) summary.idle = await benchPgIdle();
if (want('targets')) summary.targets = await benchTargetsDrain();
if (want('list')) summary.list = await benchAutopulseList();
if (want('jellyfin')) summary.jellyfin = await benchJellyfinModes();
if (want('stats')) summary.stats = await benchStats();
if (want('reads')) summary.reads = await benchTrustReads();
process.stdout.write(`\n${JSON.stringify({ bench: 'all', seconds: Math.round((Date.now() - started) / 1000), node: process.version, summary })}\n`);
