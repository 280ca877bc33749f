#!/bin/sh
# Run by `meson install` (meson.build): refreshes the dynamic loader's cache so that programs
# linked with -ltidal start without LD_LIBRARY_PATH. Meson 1.0 does not do it itself.
# Usage: install-ldconfig.sh LIBDIR (absolute, without DESTDIR).
libdir="$1"
# A staged install (--destdir, packaging) is not where programs will load the library from;
# the real installation (the package manager's trigger) runs ldconfig.
[ -n "${DESTDIR:-}" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "tidal: not root, so ldconfig was not run: run 'sudo ldconfig', or set LD_LIBRARY_PATH=$libdir"
    exit 0
fi
PATH="$PATH:/sbin:/usr/sbin"
ldconfig || { echo "tidal: ldconfig failed: run it by hand, or set LD_LIBRARY_PATH=$libdir"; exit 0; }
# ldconfig caches only the folders of /etc/ld.so.conf: say so when the prefix is elsewhere.
if ! ldconfig -p | grep -qF "=> $libdir/libtidal.so.0"; then
    echo "tidal: $libdir is not in the loader's search path: add it to a file in /etc/ld.so.conf.d/ and run ldconfig, or set LD_LIBRARY_PATH=$libdir"
fi
