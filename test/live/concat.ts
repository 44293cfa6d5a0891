/** Concatenates pcap files of one link type into one, with our reader and writer (ring tests). */
import { readCapture } from '../../src/capture/read-capture.js';
import { PcapFileWriter } from '../../src/report/pcap-writer.js';

export async function concatPcaps(files: readonly string[], out: string): Promise<void> {
  let w: PcapFileWriter | null = null;
  for (const f of files) {
    await readCapture(f, (p) => {
      w ??= new PcapFileWriter(out, p.linkType, true);
      w.write({ tsSec: p.tsSec, tsNsec: p.tsNsec, data: p.data, origLen: p.origLen });
    });
  }
  (w as PcapFileWriter | null)?.close();
}
