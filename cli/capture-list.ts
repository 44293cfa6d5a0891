/**
 * The captures of a command line: each argument names a capture (a file, `-` for standard input,
 * or any path: a capture named explicitly is always analysed, whatever its name), or a directory,
 * which stands for the capture files directly in it, sorted by name (byte order, as `ls` in the C
 * locale). In a directory, a capture file is one named *.pcap, *.pcapng or *.cap, each optionally
 * .gz (case ignored); other files, hidden files, subdirectories and entries that are no regular file
 * (FIFOs, devices, dangling links, link loops) are skipped with one note on standard error. A directory with no capture file in it is a usage error.
 */
import { type Dirent, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from './options.js';
import { writeReason } from './output.js';
import { printable } from '../src/report/printable.js';

export const CAPTURE_FILE_NAME = /\.(pcap|pcapng|cap)(\.gz)?$/i;

export function isDirectory(path: string): boolean {
  try {
    return path !== '-' && statSync(path).isDirectory();
  } catch {
    return false; // the capture reader says what is wrong with it
  }
}

/** A directory's entries, sorted by name, sorted into what a walk takes and what it skips. */
export interface DirectoryListing {
  /** Regular files (or links to one) whose names `wanted` accepts, as paths. */
  found: string[];
  /** Regular files whose names it does not accept, and hidden files. */
  skipped: string[];
  /** Names that are no regular file: FIFOs, sockets, devices, dangling links, symbolic-link loops. */
  irregular: string[];
  subdirs: number;
}

/**
 * One level of `dir`, never recursing (so no symbolic-link loop can hold a walk). Only regular
 * files are taken: a FIFO named *.pcap would block the run for a writer that may never come, a
 * device would be read forever. (A FIFO named on the command line is read, as `cat` would.)
 */
export function listDirectory(dir: string, wanted: RegExp): DirectoryListing {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    throw new UsageError(`${dir}: cannot list the directory: ${writeReason(e)}`);
  }
  const out: DirectoryListing = { found: [], skipped: [], irregular: [], subdirs: 0 };
  for (const entry of entries.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))) {
    const name = entry.name;
    const path = join(dir, name);
    // The directory says what a plain file or subdirectory is: a stat each (130,000 reports in a
    // directory) only for the rest, links above all.
    let isDir = entry.isDirectory();
    let isFile = entry.isFile();
    if (!isDir && !isFile) {
      let st;
      try {
        st = statSync(path); // follows a link to what it names; a loop or a dangling link throws
      } catch {
        out.irregular.push(name);
        continue;
      }
      isDir = st.isDirectory();
      isFile = st.isFile();
    }
    if (isDir) out.subdirs++;
    else if (!isFile) out.irregular.push(name);
    else if (!name.startsWith('.') && wanted.test(name)) out.found.push(path);
    else out.skipped.push(name);
  }
  return out;
}

/** The first few names of a list, for a note ("a, b, c, …"), control characters shown escaped. */
export function someNames(names: readonly string[]): string {
  return printable(names.slice(0, 3).join(', ') + (names.length > 3 ? ', …' : ''));
}

/** What a directory walk left out, as the parts of one note (empty when it left nothing out). */
export function skippedParts(l: DirectoryListing, what: string): string[] {
  const parts: string[] = [];
  if (l.skipped.length)
    parts.push(
      `skipped ${l.skipped.length} ${l.skipped.length === 1 ? 'file' : 'files'} not named as ${what} (${someNames(l.skipped)}); name a file to analyse it`,
    );
  if (l.irregular.length)
    parts.push(
      `skipped ${l.irregular.length} ${l.irregular.length === 1 ? 'entry' : 'entries'} that ${l.irregular.length === 1 ? 'is' : 'are'} no regular file (FIFO, socket, device, dangling link or link loop: ${someNames(l.irregular)})`,
    );
  if (l.subdirs) parts.push(`${l.subdirs} ${l.subdirs === 1 ? 'subdirectory' : 'subdirectories'} not searched`);
  return parts;
}

/** Arguments to captures, directories expanded; notes (skipped files) go to `note`. */
export function expandCaptures(args: readonly string[], note: (line: string) => void): string[] {
  const out: string[] = [];
  for (const a of args) {
    if (!isDirectory(a)) {
      out.push(a);
      continue;
    }
    const l = listDirectory(a, CAPTURE_FILE_NAME);
    if (l.found.length === 0) {
      throw new UsageError(
        `${a}: is a directory holding no capture files (*.pcap, *.pcapng, *.cap, optionally .gz); name a capture file to analyse it whatever its name`,
      );
    }
    const parts = skippedParts(l, 'a capture');
    if (parts.length) note(`mpa-dissect: ${printable(a)}: ${parts.join('; ')}\n`);
    for (const f of l.found) out.push(f); // a loop: 125,000+ files overflow a spread's stack
  }
  return out;
}
