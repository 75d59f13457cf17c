/**
 * Copy rules are registered once per class, under a stable name (clone.ts): the copier and the
 * snapshot codec (sim/engine/snapshot-registry.ts) both read that one registration, so a class
 * without a name, or two classes under one, would be a copy that cannot be saved or a snapshot
 * read back as the wrong class. Both are refused when the class registers.
 */
import { describe, expect, it } from 'vitest';
import { CloneMap, copyable, copyableClasses } from './clone';

describe('copyable', () => {
  it('names the class: the name is listed with the class', () => {
    class Named {
      n = 1;
    }
    copyable(Named, { name: 'spec.Named' });
    expect(copyableClasses().get('spec.Named')).toBe(Named);
    const a = new Named();
    const b = new CloneMap().get(a);
    expect(b).toBeInstanceOf(Named);
    expect(b).not.toBe(a);
  });

  it('refuses rules without a name', () => {
    class Anonymous {}
    expect(() => copyable(Anonymous, {} as never)).toThrow(/Anonymous.*stable name/);
    expect(() => copyable(Anonymous, { name: '' })).toThrow(/stable name/);
    // Not registered: not copied either.
    expect(() => new CloneMap().get(new Anonymous())).toThrow(/not copyable/);
  });

  it('refuses a second class under a name already given', () => {
    class First {}
    class Second {}
    copyable(First, { name: 'spec.Taken' });
    expect(() => copyable(Second, { name: 'spec.Taken' })).toThrow(
      /'spec\.Taken' is class First's/
    );
    expect(copyableClasses().get('spec.Taken')).toBe(First);
  });

  it('refuses a class registered again under another name', () => {
    class Twice {}
    copyable(Twice, { name: 'spec.Twice' });
    expect(() => copyable(Twice, { name: 'spec.Other' })).toThrow(/registered already/);
    expect(copyableClasses().has('spec.Other')).toBe(false);
  });
});
