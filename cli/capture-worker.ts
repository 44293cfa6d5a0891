/**
 * The worker-thread side of a multi-capture run (cli/multi.ts): runs each job it is sent
 * (cli/capture-job.ts) and answers with its result.
 */
import { parentPort } from 'node:worker_threads';
import { runCaptureJob, type CaptureJob } from './capture-job.js';

parentPort!.on('message', (job: CaptureJob) => {
  void runCaptureJob(job).then((r) => parentPort!.postMessage(r));
});
