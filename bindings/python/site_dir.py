"""Where to install the Python package for a given prefix: prints two lines, the folder
relative to the prefix and `searched` or `not-searched`.

Run by bindings/python/meson.build with the interpreter meson found, so the answer is that
interpreter's. Meson 1.0's own choice on Debian is PREFIX/lib/python3/dist-packages (Debian's
deb_system scheme with the prefix swapped in), which Debian's python3 does not search for
/usr/local (meson issue #8739). So: the folder under the prefix that the interpreter itself
searches (sys.path, without PYTHONPATH: meson runs this with -E); where there are several (the
prefix /usr on Debian holds both /usr/lib/python3/dist-packages and
/usr/local/lib/python3.X/dist-packages), the shortest below the prefix, which is the one the
prefix owns. Where it searches none (a prefix of one's own, a pyenv python with /usr/local),
sysconfig's posix_prefix scheme for the prefix, and the user adds it to PYTHONPATH.
"""
import os
import site
import sys
import sysconfig


def main():
    prefix = os.path.normpath(os.path.abspath(sys.argv[1]))

    def under_prefix(path):
        return os.path.commonpath([path, prefix]) == prefix

    # site adds a site folder to sys.path only if it exists: a fresh Debian may not have
    # /usr/local/lib/python3.X/dist-packages yet, and the install creates it.
    folders = list(sys.path) + site.getsitepackages()
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    searched = [os.path.normpath(p) for p in folders
                if p.endswith(("site-packages", "dist-packages")) and os.path.isabs(p)]
    candidates = [p for p in searched if under_prefix(p)]
    if candidates:
        chosen = min(candidates, key=lambda p: len(os.path.relpath(p, prefix)))
        state = "searched"
    else:
        chosen = sysconfig.get_path("purelib", "posix_prefix", vars={
            "base": prefix, "platbase": prefix, "installed_base": prefix, "installed_platbase": prefix})
        state = "not-searched"
    print(os.path.relpath(chosen, prefix))
    print(state)


if __name__ == "__main__":
    main()
