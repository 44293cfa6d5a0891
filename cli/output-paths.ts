/**
 * Output files named on the command line, checked before the run so that a bad path fails at once
 * rather than after a long capture.
 */
import { closeSync, lstatSync, openSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { openReason } from '../src/capture/read-capture.js';
import { UsageError } from './options.js';

/** Opens an output file before the run, so a bad path fails at once rather than after a long capture. */
export function checkWritable(path: string, flag: string, capture: string): void {
  if (capture !== '-' && namesSameFile(path, capture))
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

/**
 * Where a path leads once its directories and symbolic links are followed, whether or not the
 * file exists yet (a link to a file still to be written leads to that file).
 */
function finalPath(p: string, depth = 0): string {
  try {
    return realpathSync(p);
  } catch {
    // not there (yet), or a link loop
  }
  try {
    if (depth < 40 && lstatSync(p).isSymbolicLink()) return finalPath(resolve(dirname(p), readlinkSync(p)), depth + 1);
  } catch {
    // not there at all
  }
  try {
    return join(realpathSync(dirname(p)), basename(p));
  } catch {
    return resolve(p);
  }
}

/** Two names of one file: the same file now (device and inode: hard links too), or the same path once links are followed. */
export function namesSameFile(a: string, b: string): boolean {
  return sameFile(a, b) || finalPath(a) === finalPath(b);
}

/** --annotate FILE: not the capture, not -w's file, writable (live: opened when the capture starts). */
export function checkAnnotatePath(path: string, write: string | null, capture: string, live: boolean): void {
  if (write !== null && namesSameFile(write, path))
    throw new UsageError(`--annotate ${path}: -w writes that file too; choose two names`);
  if (!live) checkWritable(path, '--annotate', capture);
}
