#!/usr/bin/env python3
"""Fails when the Fortran mirror of tidal.h is incomplete.

Checks, by name: every function of tidal.h has a bind(C) interface in tidal_c.f90; every
struct with a body is a bind(C) type there with the same fields in the same order; every
named constant (#define and enumerator) is in tidal_constants.f90, is re-exported by module
tidal, and is compared with C by test_abi_layout.f90. Values and offsets are checked by that
test at run time; this script catches what it cannot: names nobody mirrored yet.
"""
import argparse
import re
import sys

NOT_CONSTANTS = {'TIDAL_API', 'TIDAL_TIDAL_H'}


def strip_c_comments(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', text)


def header_names(path):
    text = strip_c_comments(open(path, encoding='utf-8').read())
    functions = re.findall(r'TIDAL_API\b[^;(]*?\b(tidal_\w+)\s*\(', text)
    constants = []
    for name, value in re.findall(r'^\s*#\s*define\s+(TIDAL_\w+)(?:[ \t]+([^\n]*))?$', text, re.M):
        if name in NOT_CONSTANTS or name.endswith('_INIT') or not value:
            continue
        if value.lstrip().startswith('__') or '(' in name:
            continue
        constants.append(name)
    for body in re.findall(r'typedef\s+enum\s+\w*\s*\{(.*?)\}', text, re.S):
        # *_FORCE_32BIT only fixes a C enum's width (Fortran's integer(c_int) already is 32
        # bits) and is never a value a program passes or receives: nothing to mirror.
        constants += [name for name in re.findall(r'\b(TIDAL_\w+)\s*=', body)
                      if not name.endswith('_FORCE_32BIT')]
    structs = {}
    for name, body in re.findall(r'typedef\s+struct\s+(tidal_\w+)\s*\{(.*?)\}\s*\w+\s*;', text, re.S):
        fields = []
        for declaration in body.split(';'):
            match = re.search(r'(\w+)\s*(?:\[[^\]]*\])?\s*$', declaration.strip())
            if match and declaration.strip():
                fields.append(match.group(1))
        structs[name] = fields
    return functions, constants, structs


def fortran_types(text):
    types = {}
    for name, body in re.findall(r'^\s*type\s*,\s*bind\s*\(\s*c\s*\)\s*::\s*(\w+)(.*?)^\s*end\s+type',
                                 text, re.M | re.S | re.I):
        fields = re.findall(r'::\s*(\w+)', body)
        types[name.lower()] = [f.lower() for f in fields]
    return types


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--header', required=True)
    parser.add_argument('--interfaces', required=True, help='tidal_c.f90')
    parser.add_argument('--constants', required=True, help='tidal_constants.f90')
    parser.add_argument('--user-module', required=True, help='tidal.f90')
    parser.add_argument('--layout-test', required=True, help='test_abi_layout.f90')
    args = parser.parse_args(argv)

    functions, constants, structs = header_names(args.header)
    interfaces = open(args.interfaces, encoding='utf-8').read()
    constants_f90 = open(args.constants, encoding='utf-8').read()
    user_f90 = open(args.user_module, encoding='utf-8').read()
    layout_f90 = open(args.layout_test, encoding='utf-8').read()
    problems = []
    if len(functions) < 10 or len(constants) < 20 or len(structs) < 3:
        problems.append(f'parsed only {len(functions)} functions, {len(constants)} constants and '
                        f'{len(structs)} structs from {args.header}: has its format changed?')

    bound = set(re.findall(r"bind\s*\(\s*c\s*,\s*name\s*=\s*'(\w+)'", interfaces, re.I))
    for name in functions:
        if name not in bound:
            problems.append(f"{name}: no interface with bind(C, name='{name}') in {args.interfaces}")

    mirrored = fortran_types(interfaces)
    for name, fields in structs.items():
        if name not in mirrored:
            problems.append(f'struct {name}: no `type, bind(C) :: {name}` in {args.interfaces}')
        elif mirrored[name] != [f.lower() for f in fields]:
            problems.append(f'struct {name}: C fields {fields} but Fortran components '
                            f'{mirrored[name]} (same names, same order needed)')

    defined = {n.upper() for n in re.findall(r'parameter\s*::\s*(\w+)\s*=', constants_f90, re.I)}
    statements = re.sub(r'&[ \t]*\n[ \t]*', ' ', user_f90).splitlines()
    exported = set()
    for statement in statements:
        match = re.match(r'\s*public\s*::(.*)', statement, re.I)
        if match:
            exported |= {n.strip().upper() for n in match.group(1).split('!')[0].split(',')}
    compared = set(re.findall(r"'(TIDAL_[A-Z0-9_]+)'", layout_f90))
    for name in constants:
        if name not in defined:
            problems.append(f'{name}: not defined in {args.constants}')
    for name in sorted(defined):
        if name not in exported:
            problems.append(f'{name}: not made public by module tidal ({args.user_module})')
        if name != 'TIDAL_VERSION_STRING' and name not in compared:
            problems.append(f'{name}: not compared with C in {args.layout_test}')

    for problem in problems:
        print('check_mirror: ' + problem, file=sys.stderr)
    if not problems:
        print(f'check_mirror: {len(functions)} functions, {len(structs)} structs and '
              f'{len(constants)} constants of tidal.h are mirrored')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
