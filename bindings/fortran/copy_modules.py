#!/usr/bin/env python3
"""Copies Fortran module files out of a library's build folder so meson can install them.

Usage: copy_modules.py FROM_DIR TO_DIR NAME.mod...
Fails naming the missing file when the compiler did not write one of them (a renamed module,
or a compiler that names its module files differently)."""
import shutil
import sys
from pathlib import Path


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    source, target, names = Path(argv[0]), Path(argv[1]), argv[2:]
    for name in names:
        found = source / name
        if not found.is_file():
            print(f'copy_modules.py: {found} does not exist; the Fortran compiler wrote: '
                  f'{sorted(p.name for p in source.glob("*.mod")) or "no .mod files"}',
                  file=sys.stderr)
            return 1
        shutil.copyfile(found, target / name)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
