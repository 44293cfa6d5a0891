/**
 * A fixed-size pool of worker threads running one script: jobs go to an idle worker (started on
 * first need and reused, so each worker pays the module loading once), at most `size` at a time,
 * the rest wait in order. A worker that dies (out of memory, an uncaught error) fails its job
 * only: it is dropped and the next job gets a new one. A job that reads standard input gets a
 * worker of its own with the process's standard input piped into it, ended with the job.
 *
 * The script answers each job message with exactly one result message.
 */
import { Worker } from 'node:worker_threads';

interface Pending<J, R> {
  job: J;
  stdin: boolean;
  resolve(r: R): void;
  reject(e: Error): void;
}

export class WorkerPool<J, R> {
  private readonly idle: Worker[] = [];
  private readonly all = new Set<Worker>();
  private readonly queue: Array<Pending<J, R>> = [];
  private active = 0;
  private closed = false;

  constructor(
    private readonly script: URL,
    readonly size: number,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`pool size ${size}`);
  }

  /** Runs `job` on a worker; `stdin`: the job reads the process's standard input. */
  run(job: J, stdin = false): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ job, stdin, resolve, reject });
      this.next();
    });
  }

  /** Stops every worker; jobs still waiting are failed. */
  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(new Error('the pool was closed'));
    await Promise.all([...this.all].map((w) => w.terminate()));
    this.all.clear();
    this.idle.length = 0;
  }

  private next(): void {
    while (!this.closed && this.active < this.size && this.queue.length > 0) {
      const p = this.queue.shift()!;
      this.active++;
      this.start(p);
    }
  }

  private spawn(stdin: boolean): Worker {
    const w = new Worker(this.script, { stdin, stdout: false, stderr: false });
    this.all.add(w);
    if (stdin) {
      process.stdin.pipe(w.stdin!);
      // The worker may stop reading before the end (an unreadable capture): not an error of ours.
      w.stdin!.on('error', () => {});
    }
    return w;
  }

  private start(p: Pending<J, R>): void {
    const w = p.stdin ? this.spawn(true) : (this.idle.pop() ?? this.spawn(false));
    let settled = false;
    const finish = (keep: boolean): void => {
      settled = true;
      w.off('message', onMessage);
      w.off('error', onError);
      w.off('exit', onExit);
      this.active--;
      if (keep && !this.closed) this.idle.push(w);
      else {
        this.all.delete(w);
        if (p.stdin) process.stdin.unpipe(w.stdin!);
        void w.terminate();
      }
      this.next();
    };
    const onMessage = (r: R): void => {
      if (settled) return;
      finish(!p.stdin);
      p.resolve(r);
    };
    const onError = (e: Error): void => {
      if (settled) return;
      finish(false);
      p.reject(e);
    };
    const onExit = (code: number): void => {
      if (settled) return;
      finish(false);
      p.reject(new Error(`worker exited with status ${code}`));
    };
    w.on('message', onMessage);
    w.on('error', onError);
    w.on('exit', onExit);
    w.postMessage(p.job);
  }
}
