const root = process.argv[2];
const { QueueStore } = await import(`${root}/src/queue/store.ts`);
const { scanRequestSchema } = await import(`${root}/src/core/scan.ts`);
const s = new QueueStore(':memory:');
const timing = { delayMs: 60_000, maxMs: 0 };
const mk = (i: number) => scanRequestSchema.parse({ folder: `/data/TV/Show ${i % 2000}/Season ${i % 3}`, files: [`/data/TV/Show ${i % 2000}/Season ${i % 3}/e${i}.mkv`], source: 'Sonarr' });
for (let r = 0; r < 2; r++) {
  const t = process.hrtime.bigint();
  for (let b = 0; b < 400; b++) s.enqueueMany(Array.from({ length: 50 }, (_, j) => mk(r * 20000 + b * 50 + j)), timing, 1000 + b);
  console.log(root.includes('pgb-main') ? 'main' : 'branch', 'run', r, Number(process.hrtime.bigint() - t) / 1e6, 'ms for 20000 requests');
}
