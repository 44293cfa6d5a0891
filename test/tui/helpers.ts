import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { CaptureModel } from '../../src/tui/capture-model.js';
import { ViewModel } from '../../src/tui/view-model.js';
import { analysisOptions, fileSource } from '../../cli/tui.js';
import { lineText, type Line } from '../../src/tui/lines.js';

const here = dirname(fileURLToPath(import.meta.url));
export const CAPTURES = join(here, '..', '..', 'captures');
export const capture = (name: string): string => join(CAPTURES, name);

/** A view model over a capture file, read to the end and settled (the list fully built). */
export async function openModel(
  path: string,
  o: { filter?: string; cacheSize?: number; width?: number; height?: number } = {},
): Promise<{ model: CaptureModel; vm: ViewModel }> {
  const { options, thresholds } = analysisOptions({
    capture: path,
    displayFilter: null,
    rules: null,
    mpa: [],
    checksums: false,
  });
  const source = await fileSource(path, options, thresholds);
  const model = new CaptureModel(source, o.cacheSize);
  const vm = new ViewModel(model);
  vm.resize(o.width ?? 120, o.height ?? 40);
  if (o.filter) vm.applyFilter(o.filter);
  await model.run();
  vm.settle();
  return { model, vm };
}

export function paneText(vm: ViewModel, id: string): string[] {
  const p = vm.panes().find((x) => x.id === id)!;
  return p.lines.map(lineText);
}

export function paneLines(vm: ViewModel, id: string): Line[] {
  return vm.panes().find((x) => x.id === id)!.lines;
}

/** Types a string into the view model, one key per character. */
export function type(vm: ViewModel, s: string): void {
  for (const ch of s) vm.key(ch, ch);
}

export function paneTitle(vm: ViewModel, id: string): string {
  return vm.panes().find((x) => x.id === id)!.title;
}
