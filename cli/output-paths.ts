/**
 * Output files named on the command line, checked before the run so that a bad path fails at once
 * rather than after a long capture.
 */
import { closeSync, openSync, statSync } from 'node:fs';
import { openReason } from '../src/capture/read-capture.js';
import { UsageError } from './options.js';

/** Opens an output file before the run, so a bad path fails at once rather than after a long capture. */
export function checkWritable(path: string, flag: string, capture: string): void {
  if (capture !== '-' && sameFile(path, capture))
    throw new UsageError(`${flag} ${path}: that is the capture being read; choose another file`);
  try {
    // 'a', not 'w': an existing file is left as it is until the output is written at the end, so a
    // run that fails (no capture on standard input, a bad filter) destroys nothing.
    closeSync(openSync(path, 'a'));
  } catch (e) {
    throw new UsageError(`${flag} ${path}: cannot write: ${openReason(e)}`);
  }
}

export function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return true; // the capture reader will say what is wrong with it
  }
}

export function sameFile(a: string, b: string): boolean {
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.ino === y.ino && x.dev === y.dev;
  } catch {
    return false;
  }
}

/** --annotate FILE: not the capture, not -w's file, writable (live: opened when the capture starts). */
export function checkAnnotatePath(path: string, write: string | null, capture: string, live: boolean): void {
  if (write !== null && (write === path || sameFile(write, path)))
    throw new UsageError(`--annotate ${path}: -w writes that file too; choose two names`);
  if (!live) checkWritable(path, '--annotate', capture);
}
