/**
 * Fields most instances of a per-direction class never change from their defaults (error counters,
 * hunting and diagnosis state), kept out of the instance: they are declared once as a table of
 * defaults, read as the default until the first write of another value, which creates one side
 * object (the instance's `more`) holding them all. 100,000 open flows then carry one null slot per
 * direction instead of twenty fields. The class declares the fields by merging an interface of the
 * table's type (`interface C extends RareFields<typeof TABLE> {}`).
 */

/** The fields of a defaults table, as instance fields (their types widened from the literals'). */
export type RareFields<D> = { -readonly [K in keyof D]: D[K] };

/** An instance carrying a side object of rare fields, null until one of them changes. */
interface RareSlot {
  more: Record<string, unknown> | null;
}

/** A new side object: a copy of the defaults (all side objects of a table share one shape). */
export function newRare<D extends object>(defaults: D): RareFields<D> {
  return { ...defaults };
}

/**
 * Installs each field of `defaults` on `cls`'s prototype as an accessor reading through `more`,
 * except those the class defines itself (a collection it hands out through methods of its own).
 */
export function defineRareFields(cls: { prototype: object }, defaults: Readonly<Record<string, unknown>>): void {
  for (const key of Object.keys(defaults)) {
    if (Object.hasOwn(cls.prototype, key)) continue;
    const initial = defaults[key];
    Object.defineProperty(cls.prototype, key, {
      get(this: RareSlot): unknown {
        const m = this.more;
        return m === null ? initial : m[key];
      },
      set(this: RareSlot, v: unknown): void {
        let m = this.more;
        if (m === null) {
          if (v === initial) return; // still the default: nothing to keep
          m = this.more = { ...defaults };
        }
        m[key] = v;
      },
      configurable: true,
    });
  }
}
