// What the client tests share: a server of their own on a free port, and the
// checks' count.
import { spawn } from 'node:child_process';

// Starts `program` with `args` on a free loopback port (one thread); resolves
// with { baseURL, stop } once it listens.
export async function startServer(program, args = []) {
  const child = spawn(program, ['--port', '0', '-t', '1', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const port = await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`the server exited (${code}) before listening: ${err}`)));
  });
  return { baseURL: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

// Counts checks, so that each test can say how many passed.
export class Checks {
  count = 0;
  check(f) {
    f();
    ++this.count;
  }
  async rejects(promise, test) {
    const { rejects } = await import('node:assert/strict');
    await rejects(promise, test);
    ++this.count;
  }
}
