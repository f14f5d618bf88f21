// The framework floor: fastify with @fastify/formbody, parsing the same bodies and answering a small JSON
// object, and nothing else. It runs in its own process like the relay. The relay cannot be faster than
// this, so "scanrelay / floor" is the cost of scanrelay's own work. Prints its port.
import formbody from '@fastify/formbody';
import Fastify from 'fastify';

const app = Fastify({ logger: false });
await app.register(formbody);
app.post('/:secret', async (req) => ({ status: 'queued', eventType: req.body?.eventType ?? null }));
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${app.server.address().port}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
