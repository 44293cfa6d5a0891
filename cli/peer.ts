/**
 * `mpa-dissect peer`: an MPA endpoint over real TCP sockets (src/peer), to have something to
 * capture: run a Responder with --listen and an Initiator with --connect, each with its own
 * options (M and C bits, Rev, IRD/ORD, RTR), a script and faults. Prints one JSON line saying what
 * was negotiated and sent (and which asked-for faults could not take effect); exit 0, or 2 on a
 * usage error or a connection that failed.
 */
import yargs from 'yargs';
import { runPeer, PEER_DEFAULTS, type PeerOptions, type Rtr } from '../src/peer/endpoint.js';
import { parseFaults, parseScript, ScriptError } from '../src/peer/script.js';
import { UsageError } from './options.js';

/** peer's option table: its --help, and its section of the man page (cli/man-page.ts). */
export function peerParser(argv: string[]) {
  const parser = yargs(argv)
    .scriptName('mpa-dissect peer')
    .usage(
      '$0 (--listen [HOST:]PORT | --connect HOST:PORT) [options]\n\nAn MPA endpoint over real TCP sockets: the Responder listens, the Initiator connects.',
    )
    .option('listen', {
      type: 'string',
      describe: 'Be the Responder: accept one connection on [HOST:]PORT (PORT 0: any free port, printed on stderr)',
    })
    .option('connect', { type: 'string', describe: 'Be the Initiator: connect to HOST:PORT' })
    .option('rev', {
      choices: [1, 2] as const,
      default: 1 as 1 | 2,
      describe: 'MPA revision (2: RFC 6581 enhanced startup with IRD/ORD)',
    })
    .option('markers', {
      type: 'boolean',
      default: false,
      describe: 'M bit: ask for markers in what this side receives',
    })
    .option('crc', {
      choices: ['on', 'off'] as const,
      default: 'on',
      describe: 'C bit (CRC is used when either side sets it)',
    })
    .option('ird', { type: 'number', default: PEER_DEFAULTS.ird, describe: 'Rev 2: IRD' })
    .option('ord', { type: 'number', default: PEER_DEFAULTS.ord, describe: 'Rev 2: ORD' })
    .option('rtr', {
      choices: ['send', 'write', 'read'] as const,
      describe: 'Rev 2 peer-to-peer: the RTR offered (Initiator) or picked (Responder)',
    })
    .option('script', {
      type: 'string',
      default: 'send:100',
      describe: 'Steps after startup: send:N, write:N, read:N, pause:MS, terminate (comma-separated)',
    })
    .option('fault', {
      type: 'string',
      array: true,
      nargs: 1,
      describe: "crc@K, fpduptr@K, pad@K (this side's FPDU K), key, responder-first",
    })
    .option('max-ulpdu', {
      type: 'number',
      default: PEER_DEFAULTS.maxUlpdu,
      describe: 'Largest ULPDU sent (messages are cut into DDP segments)',
    })
    .option('pace', { type: 'number', default: 0, describe: 'Milliseconds to wait after each FPDU' })
    .option('timeout', {
      type: 'number',
      default: 30,
      describe: 'Seconds before giving up, whatever the state (exit 2 with one line saying where it stood)',
    });
  return parser;
}

export async function runPeerCli(argv: string[]): Promise<number> {
  const a = await peerParser(argv)
    .strict()
    .help()
    .fail((msg, err) => {
      throw err ?? new UsageError(`peer: ${msg}`);
    })
    .parseAsync();
  if ((a.listen === undefined) === (a.connect === undefined))
    throw new UsageError('peer: give --listen [HOST:]PORT (Responder) or --connect HOST:PORT (Initiator)');
  const ep = (a.listen ?? a.connect)!;
  const m = /^(?:(.*):)?(\d+)$/.exec(ep);
  if (!m || Number(m[2]) > 65535) throw new UsageError(`peer: "${ep}" is not [HOST:]PORT`);
  const host = (m[1] ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1');
  let script;
  let faults;
  try {
    script = parseScript(a.script);
    faults = parseFaults(a.fault ?? []);
  } catch (e) {
    if (e instanceof ScriptError) throw new UsageError(`peer: ${e.message}`);
    throw e;
  }
  if (!(a.timeout > 0 && a.timeout <= 86400))
    throw new UsageError('peer: --timeout must be between 0 and 86400 seconds');
  if (!(a.pace >= 0 && a.pace <= 60000)) throw new UsageError('peer: --pace must be between 0 and 60000 ms');
  if (!(a['max-ulpdu'] >= 64 && a['max-ulpdu'] <= 65535))
    throw new UsageError('peer: --max-ulpdu must be between 64 and 65535');
  if (a.connect !== undefined && m[1] === undefined) throw new UsageError('peer: --connect needs HOST:PORT');
  const o: PeerOptions = {
    ...PEER_DEFAULTS,
    role: a.listen !== undefined ? 'responder' : 'initiator',
    host,
    port: Number(m[2]),
    rev: a.rev,
    markers: a.markers,
    crc: a.crc === 'on',
    ird: a.ird,
    ord: a.ord,
    rtr: (a.rtr as Rtr | undefined) ?? null,
    script,
    faults,
    maxUlpdu: a['max-ulpdu'],
    pace: a.pace,
    timeoutMs: a.timeout * 1000,
    onListening: (port) => process.stderr.write(`mpa-dissect peer: listening on ${host}:${port}\n`),
  };
  try {
    const r = await runPeer(o);
    process.stdout.write(JSON.stringify(r) + '\n');
    return 0;
  } catch (e) {
    // The peer's own errors already begin "peer (role):"; a bare one gets the prefix.
    const msg = e instanceof Error ? e.message : String(e);
    throw new UsageError(msg.startsWith('peer (') ? msg : `peer: ${msg}`);
  }
}
