/**
 * The captures of a command line: each argument names a capture (a file, `-` for standard input,
 * or any path: a capture named explicitly is always analysed, whatever its name), or a directory,
 * which stands for the capture files directly in it, sorted by name (byte order, as `ls` in the C
 * locale). In a directory, a capture file is one named *.pcap, *.pcapng or *.cap, each optionally
 * .gz (case ignored); other files, hidden files and subdirectories are skipped with one note on
 * standard error. A directory with no capture file in it is a usage error.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from './options.js';
import { writeReason } from './output.js';

export const CAPTURE_FILE_NAME = /\.(pcap|pcapng|cap)(\.gz)?$/i;

export function isDirectory(path: string): boolean {
  try {
    return path !== '-' && statSync(path).isDirectory();
  } catch {
    return false; // the capture reader says what is wrong with it
  }
}

/** Arguments to captures, directories expanded; notes (skipped files) go to `note`. */
export function expandCaptures(args: readonly string[], note: (line: string) => void): string[] {
  const out: string[] = [];
  for (const a of args) {
    if (!isDirectory(a)) {
      out.push(a);
      continue;
    }
    const found: string[] = [];
    const skipped: string[] = [];
    let subdirs = 0;
    let names: string[];
    try {
      names = readdirSync(a);
    } catch (e) {
      throw new UsageError(`${a}: cannot list the directory: ${writeReason(e)}`);
    }
    for (const name of names.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))) {
      const path = join(a, name);
      let dir = false;
      try {
        dir = statSync(path).isDirectory();
      } catch {
        // a dangling link: judged by its name like any file
      }
      if (dir) subdirs++;
      else if (!name.startsWith('.') && CAPTURE_FILE_NAME.test(name)) found.push(path);
      else skipped.push(name);
    }
    if (found.length === 0) {
      throw new UsageError(
        `${a}: is a directory holding no capture files (*.pcap, *.pcapng, *.cap, optionally .gz); name a capture file to analyse it whatever its name`,
      );
    }
    const parts: string[] = [];
    if (skipped.length) {
      const shown = skipped.slice(0, 3).join(', ') + (skipped.length > 3 ? ', …' : '');
      parts.push(
        `skipped ${skipped.length} ${skipped.length === 1 ? 'file' : 'files'} not named as a capture (${shown}); name a file to analyse it`,
      );
    }
    if (subdirs) parts.push(`${subdirs} ${subdirs === 1 ? 'subdirectory' : 'subdirectories'} not searched`);
    if (parts.length) note(`mpa-dissect: ${a}: ${parts.join('; ')}\n`);
    for (const f of found) out.push(f); // a loop: 125,000+ files overflow a spread's stack
  }
  return out;
}
