"""The ctypes mirror against tidal.h: every function has a prototype, every struct has the C
compiler's layout, every constant its header value. A header change the package lacks fails here."""
import ctypes
import os
import re
import shutil
import subprocess

import pytest
import tidal
from tidal import _native, errors

STRUCTS = {
    "tidal_alloc_desc": _native.AllocDesc,
    "tidal_pointer_info": _native.PointerInfo,
    "tidal_pool_stats": _native.PoolStats,
    "tidal_range_info": _native.RangeInfo,
    "tidal_access": _native.Access,
    "tidal_copy_item": _native.CopyItem,
    "tidal_migration_stats": _native.MigrationStats,
    "tidal_check": _native.Check,
    "tidal_system_info": _native.SystemInfo,
    "tidal_device_info": _native.DeviceInfo,
    "tidal_elastic_result": _native.ElasticResult,
    "tidal_peer_info": _native.PeerInfo,
}

# Header prefix -> the Python enum holding those constants (the prefix stripped).
ENUMS = {
    "TIDAL_KIND_": tidal.Kind,
    "TIDAL_HINT_": tidal.Hint,
    "TIDAL_ADVICE_": tidal.Advice,
    "TIDAL_ACCESS_": tidal.Access,
    "TIDAL_DEVICE_FLAG_": tidal.DeviceFlag,
    "TIDAL_XNACK_": tidal.Xnack,
    "TIDAL_LINK_": tidal.LinkType,
    "TIDAL_COHERENCY_": tidal.Coherency,
    "TIDAL_CHECK_": tidal.CheckKind,
    "TIDAL_OFFLOAD_": tidal.Offload,
    "TIDAL_RESTORE_": tidal.Restore,
    "TIDAL_ATOMIC_": tidal.AtomicOp,
    "TIDAL_": tidal.Status,  # TIDAL_OK, TIDAL_ERROR_*
}
MODULE_CONSTANTS = {"TIDAL_DEVICE_DEFAULT": tidal.DEVICE_DEFAULT, "TIDAL_DEVICE_HOST": tidal.DEVICE_HOST,
                    "TIDAL_LOCATION_NONE": tidal.LOCATION_NONE, "TIDAL_TAG_MAX": tidal.TAG_MAX,
                    "TIDAL_KIND_COUNT": tidal.KIND_COUNT, "TIDAL_DECLARE_LOOKAHEAD": 0x1,
                    "TIDAL_ATOMIC_SET_BYTES": tidal.ATOMIC_SET_BYTES}
# Constants with no Python counterpart, and why.
UNMIRRORED = {
    "TIDAL_VERSION_MAJOR", "TIDAL_VERSION_MINOR", "TIDAL_VERSION_PATCH", "TIDAL_VERSION_NUMBER",
    "TIDAL_ABI_VERSION",            # tidal.version_number() reads the library's
    "TIDAL_DECLARE_FLAGS_ALL",      # Context.declare takes lookahead=, not raw flags
}


@pytest.fixture
def header(include_dir):
    return (include_dir / "tidal" / "tidal.h").read_text()


def header_constants(text):
    """Every numeric #define and enumerator of the header: name -> value. An enum's
    *_FORCE_32BIT sentinel only fixes its width in C and is never a value: it is left out."""
    found = {}
    for name, value in re.findall(r"#define\s+(TIDAL_\w+)\s+\(?(-?(?:0x[0-9A-Fa-f]+|\d+))u?\)?\s", text):
        found[name] = int(value, 0)
    for name, value in re.findall(r"\b(TIDAL_\w+)\s*=\s*(-?(?:0x[0-9A-Fa-f]+|\d+))\s*[,}\n/]", text):
        if not name.endswith("_FORCE_32BIT"):
            found[name] = int(value, 0)
    return found


def test_every_header_function_has_a_prototype(header):
    declared = set(re.findall(r"TIDAL_API\s+[^;{]*?\b(tidal_\w+)\s*\(", header))
    assert declared, "no functions found: the pattern no longer matches tidal.h"
    assert declared - set(_native.PROTOTYPES) == set(), "functions tidal.h has and the package lacks"
    assert set(_native.PROTOTYPES) - declared == set(), "prototypes of functions tidal.h lacks"
    assert _native.NEWER_FUNCTIONS <= set(_native.PROTOTYPES)


def test_every_header_struct_is_mirrored(header):
    structs = set(re.findall(r"typedef struct (tidal_\w+) \{", header))
    assert structs == set(STRUCTS)


def test_every_constant_matches_the_header(header):
    constants = header_constants(header)
    assert "TIDAL_HINT_READ_MOSTLY" in constants and "TIDAL_KIND_MANAGED" in constants
    unmatched = []
    for name, value in constants.items():
        if name in UNMIRRORED:
            continue
        if name in MODULE_CONSTANTS:
            if MODULE_CONSTANTS[name] != value:
                unmatched.append(f"{name} = {value}, Python has {MODULE_CONSTANTS[name]}")
            continue
        prefix = next(p for p in ENUMS if name.startswith(p))
        member = ENUMS[prefix].__members__.get(name[len(prefix):])
        if member is None or int(member) != value:
            unmatched.append(f"{name} = {value}, Python has {member!r}")
    assert not unmatched, "\n".join(unmatched)
    # And the other way: no Python member the header lacks (NONE is Python's empty set).
    for prefix, enum_type in ENUMS.items():
        for member_name in enum_type.__members__:
            if member_name != "NONE":
                assert prefix + member_name in constants, f"{prefix}{member_name} is not in tidal.h"


def test_status_names_and_exception_classes():
    for status in tidal.Status:
        assert tidal.status_name(status) == "TIDAL_" + status.name
        assert tidal.status_string(status)
        if status != tidal.Status.OK:
            cls = errors.BY_STATUS[int(status)]
            e = errors.error_for(int(status), tidal.status_name(status), "detail")
            assert type(e) is cls and isinstance(e, tidal.TidalError)
            assert e.status == status and str(e) == f"TIDAL_{status.name}: detail"
    unknown = errors.error_for(99, tidal.status_name(99), "x")
    assert type(unknown) is tidal.TidalError and unknown.status_name == "TIDAL_STATUS_UNKNOWN"


def test_exceptions_survive_pickling():
    import pickle
    e = tidal.OutOfMemoryError(2, "TIDAL_ERROR_OUT_OF_MEMORY", "no room")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is tidal.OutOfMemoryError
    assert (back.status, back.status_name, back.message) == (2, "TIDAL_ERROR_OUT_OF_MEMORY", "no room")


def test_kind_names_match_the_library():
    for kind in tidal.Kind:
        assert tidal.kind_name(kind) == kind.label
        assert tidal.Kind.parse(kind.label) is kind


def test_struct_layouts_match_the_c_compiler(include_dir, tmp_path):
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        pytest.skip("no C compiler to compare struct layouts with")
    lines = ["#include <stddef.h>", "#include <stdio.h>", "#include <tidal/tidal.h>", "int main(void) {"]
    for c_name, struct in STRUCTS.items():
        lines.append(f'printf("{c_name} sizeof %zu\\n", sizeof({c_name}));')
        for field, *_ in struct._fields_:
            lines.append(f'printf("{c_name} {field} %zu\\n", offsetof({c_name}, {field}));')
    lines += ["return 0;", "}"]
    source = tmp_path / "layout.c"
    source.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "layout"
    build = subprocess.run([compiler, "-std=c11", "-I", str(include_dir), str(source), "-o", str(exe)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    c_layout = {tuple(line.split()[:2]): int(line.split()[2]) for line in out.splitlines()}
    for c_name, struct in STRUCTS.items():
        assert c_layout[(c_name, "sizeof")] == ctypes.sizeof(struct), c_name
        for field, *_ in struct._fields_:
            assert c_layout[(c_name, field)] == getattr(struct, field).offset, f"{c_name}.{field}"
