#!/usr/bin/env python3
"""Fails when the Fortran binding keeps string lengths in static storage.

gfortran (12 at least) stores the length of every character(len=:) function result in a
static temporary of the caller (a local symbol named slen.N in .bss), which makes the
calling procedure unsafe to run in two threads at once. Module tidal is called from OpenMP
codes, so its library must hold none: the binding passes strings back through subroutines
instead (see tidal_base.f90).

Usage: check_static_strings.py --nm NM LIBRARY
"""
import argparse
import re
import subprocess
import sys


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nm', required=True)
    parser.add_argument('library')
    args = parser.parse_args(argv)
    listing = subprocess.run([args.nm, args.library], check=True, capture_output=True,
                             text=True).stdout
    if not re.search(r'\bT __tidal_MOD_tidal_init\b', listing):
        print(f'check_static_strings: {args.library} has no symbol table (stripped?) or no '
              'module tidal; nothing can be checked', file=sys.stderr)
        return 1
    statics = re.findall(r'^\S+ [bBdD] (slen\.\S+)$', listing, re.M)
    if statics:
        print(f'check_static_strings: {args.library} keeps string lengths in static storage '
              f'({", ".join(statics)}): a character(len=:) function is called somewhere in '
              'the binding; pass the string back through a subroutine argument instead',
              file=sys.stderr)
        return 1
    print(f'check_static_strings: no static string temporaries in {args.library}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
