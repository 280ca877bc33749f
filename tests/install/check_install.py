"""A program of one's own against an installed tidal, as README.md tells a new user to build it.

Usage: check_install.py PART --meson M --build-dir B --readme README.md --prefix P --libdir L
       --python-site S --python-site-searched yes|no [--fortran-built yes|no] [--preload LIBS]
PART: c (the C example and the "Next steps" commands; with a system prefix, that the libdir is
one Debian's loader and pkg-config search), fortran (the Fortran example, with
`pkg-config tidal-fortran`), plugin (the policy plugin example, used by the C example),
python (the README's Python example, importing the installed package), ldconfig (that
`meson install` runs ldconfig, with a stand-in ldconfig first on PATH).

Each part runs `meson install --destdir` into a temporary root and builds against that root
only. The examples and the commands are read from README.md itself, so the two cannot drift.
Because the root is not really installed, three things stand in for the real locations:
  * pkg-config reads only the root's .pc files (PKG_CONFIG_LIBDIR) and prefixes their paths
    with the root (PKG_CONFIG_SYSROOT_DIR);
  * LD_LIBRARY_PATH names the root's libdir, where after a real install ldconfig (run by
    `meson install`) makes the loader find libtidal.so.0 with nothing set;
  * PYTHONPATH names the root's Python package folder, where after a real install python3
    looks by itself (the test checks that it does, when meson said so).
Otherwise programs run with only PATH and HOME, plus what the README tells a user to set
(TIDAL_CONFIG for the plugin), plus the sanitizer runtime in the ASan build (--preload), which
an uninstrumented program linking an instrumented libtidal needs first.

Exit status 77 (skipped) when pkg-config or the part's compiler is missing.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def skip(message):
    print(f"SKIP: {message}")
    sys.exit(SKIP)


# ----------------------------------------------------------------------------- README
def sections(text):
    """'## Title' -> the text up to the next '## ' heading (### subsections stay inside)."""
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2])}


def code_blocks(body, language):
    return [m.group(1) for m in re.finditer(r"^```" + language + r"\n(.*?)^```", body, re.S | re.M)]


def section(readme, title):
    found = sections(readme).get(title)
    if found is None:
        fail(f"README.md has no section '## {title}'")
    return found


def inline_command(body, start):
    """The `...` span of a section that starts with `start` (a command the README gives)."""
    m = re.search(r"`(" + re.escape(start) + r"[^`]*)`", body)
    if not m:
        fail(f"README.md: no `{start}...` command where expected")
    return m.group(1)


def first_block(body, language, where):
    blocks = code_blocks(body, language)
    if not blocks:
        fail(f"README.md: no ```{language} block in {where}")
    return blocks[0]


# ----------------------------------------------------------------------------- running
class Root:
    """A `meson install --destdir` root and the environments that stand in for installing it."""

    def __init__(self, args, work):
        self.args = args
        self.dest = os.path.join(work, "root")
        self.work = os.path.join(work, "home")
        os.makedirs(self.work)
        run([args.meson, "install", "-C", args.build_dir, "--no-rebuild", "--quiet",
             "--destdir", self.dest], env=dict(os.environ), what="meson install --destdir")
        self.libdir = self.inside(args.libdir)
        if not os.path.exists(os.path.join(self.libdir, "libtidal.so.0")):
            fail(f"meson install put no libtidal.so.0 in {self.libdir}")

    def inside(self, path):
        return os.path.join(self.dest, os.path.relpath(path, "/"))

    def user_env(self, program=False, **extra):
        """What a user's shell has, plus the stand-ins for the real install; for a `program`
        linked with libtidal (not the compilers), the sanitizer runtime where it needs one."""
        env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}
        env["PKG_CONFIG_LIBDIR"] = os.path.join(self.libdir, "pkgconfig")
        env["PKG_CONFIG_SYSROOT_DIR"] = self.dest
        env["LD_LIBRARY_PATH"] = self.libdir
        if self.args.preload and program:
            env["LD_PRELOAD"] = self.args.preload
            env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1"
            env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
        env.update(extra)
        return env

    def shell(self, command, program=False, **extra):
        return run(["sh", "-ec", command], env=self.user_env(program, **extra), cwd=self.work, what=command)

    def check_flags(self, package):
        """pkg-config's flags for `package` must point into the root, not at the system."""
        flags = self.shell(f"pkg-config --cflags --libs {package}")
        if self.dest not in flags:
            fail(f"pkg-config --cflags --libs {package} does not point into the install root: {flags}")


def run(cmd, env, what, cwd=None):
    shown = " ".join(cmd) if isinstance(cmd, list) else cmd
    print(f"$ {what if what != shown else shown}")
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.stdout:
        print(p.stdout.rstrip())
    if p.returncode != 0:
        fail(f"{what}: exit status {p.returncode}")
    return p.stdout


def need(program, why):
    if shutil.which(program) is None:
        skip(f"{program} is not installed ({why})")


def write(root, name, text):
    with open(os.path.join(root.work, name), "w") as f:
        f.write(text)


def expect(output, pattern, what):
    if not re.search(pattern, output, re.M):
        fail(f"{what}: expected /{pattern}/ in the output")


# ----------------------------------------------------------------------------- parts
def build_c_example(root, readme):
    body = section(readme, "Using it from C")
    write(root, "app.c", first_block(body, "c", "'Using it from C'"))
    return inline_command(body, "cc app.c")


def loader_dirs(conf="/etc/ld.so.conf"):
    """The folders ldconfig caches: ld.so.conf with its includes, and its trusted folders."""
    dirs = ["/lib", "/usr/lib"]
    try:
        with open(conf) as f:
            lines = f.read().splitlines()
    except OSError:
        return dirs
    for line in lines:
        line = line.split("#")[0].strip()
        if line.startswith("include "):
            pattern = line.split(None, 1)[1]
            if not os.path.isabs(pattern):
                pattern = os.path.join(os.path.dirname(conf), pattern)
            for included in sorted(glob.glob(pattern)):
                dirs += loader_dirs(included)
        elif line:
            dirs.append(line)
    return dirs


def check_system_libdir(args):
    """Installed into a system prefix, the library must be where nothing needs to be set.
    (Meson 1.0 without dpkg-dev picks lib64, which neither searches.)"""
    if args.prefix not in ("/usr", "/usr/local"):
        print(f"prefix {args.prefix}: the README's LD_LIBRARY_PATH / PKG_CONFIG_PATH advice applies")
        return
    pc_path = subprocess.run(["pkg-config", "--variable", "pc_path", "pkg-config"], stdout=subprocess.PIPE,
                             text=True, env={"PATH": os.environ["PATH"]}).stdout.strip().split(":")
    if os.path.join(args.libdir, "pkgconfig") not in pc_path:
        fail(f"pkg-config does not search {args.libdir}/pkgconfig (it searches {':'.join(pc_path)})")
    if args.libdir not in loader_dirs() and args.libdir.replace("/usr/lib", "/lib", 1) not in loader_dirs():
        fail(f"the dynamic loader does not search {args.libdir} (/etc/ld.so.conf)")


def part_c(root, readme, args):
    check_system_libdir(args)
    command = build_c_example(root, readme)
    root.check_flags("tidal")
    root.shell(command)
    out = root.shell("./a.out", program=True)
    expect(out, r"^\w+ on device -?\d+, placed by \w+$", "the C example")

    # The "Next steps" block after the two commands: every line but the sudo ones (the
    # install, which the root stands in for).
    steps = re.search(r"Next steps.*?^```sh\n(.*?)^```", section(readme, "Two commands"), re.S | re.M)
    if not steps:
        fail("README.md: no ```sh block after 'Next steps' in '## Two commands'")
    lines = [l for l in steps.group(1).splitlines() if l.strip() and not l.lstrip().startswith("sudo ")]
    if not any(l.lstrip().startswith("cc ") for l in lines):
        fail("README.md's Next steps build no program")
    out = "".join(root.shell(l, program=l.lstrip().startswith("./")) for l in lines)
    expect(out, r"placed by \w+$", "the Next steps program")


def part_fortran(root, readme):
    body = section(readme, "Using it from Fortran")
    write(root, "app.f90", first_block(body, "fortran", "'Using it from Fortran'"))
    root.check_flags("tidal-fortran")
    moddir = root.shell("pkg-config --variable=fmoddir tidal-fortran").strip()
    if not moddir.startswith(root.dest):  # pkg-config may leave variables without the sysroot
        moddir = root.dest + moddir
    if not os.path.exists(os.path.join(moddir, "tidal.mod")):
        fail(f"no tidal.mod in pkg-config's fmoddir {moddir}")
    root.shell(inline_command(body, "gfortran app.f90"))
    out = root.shell("./a.out", program=True)
    expect(out, r"^managed memory, placed by \w+, \d+ bytes$", "the Fortran example")


def part_plugin(root, readme, args):
    command = build_c_example(root, readme)
    root.shell(command)
    body = section(readme, "Writing a policy plugin")
    plugin = [b for b in code_blocks(body, "c") if b.startswith("/* prefix_policy.c */")]
    if not plugin:
        fail("README.md: no ```c block starting with /* prefix_policy.c */ in 'Writing a policy plugin'")
    write(root, "prefix_policy.c", plugin[0])
    # The build command, run as given: from a folder with nothing else in it.
    root.shell(first_block(body, "sh", "'Writing a policy plugin'"))
    write(root, "your.toml", first_block(body, "toml", "'Writing a policy plugin'"))
    # The C example allocates "weights": the README's configuration sends it to the plugin.
    out = root.shell("./a.out", program=True, TIDAL_CONFIG="your.toml")
    expect(out, r"^managed on device 0, placed by prefix$", "the C example with the plugin")
    tool = root.inside(os.path.join(args.prefix, "bin", "tidal"))
    if os.path.exists(tool):
        root.shell(f"'{tool}' config check your.toml", program=True)


def part_ldconfig(args):
    """tools/install-ldconfig.sh, as `meson install` runs it, with a stand-in ldconfig."""
    script = os.path.join(os.path.dirname(args.readme), "tools", "install-ldconfig.sh")
    with tempfile.TemporaryDirectory(prefix="tidal-ldconfig-") as fake:
        calls = os.path.join(fake, "calls")
        with open(os.path.join(fake, "ldconfig"), "w") as f:
            f.write(f"#!/bin/sh\necho \"ldconfig $*\" >> {calls}\n"
                    f"[ \"$1\" = -p ] && echo \"\tlibtidal.so.0 (libc6,x86-64) => $FAKE_CACHED/libtidal.so.0\"\n"
                    "exit 0\n")
        os.chmod(os.path.join(fake, "ldconfig"), 0o755)

        def install(destdir, cached):
            if os.path.exists(calls):
                os.remove(calls)
            env = {"PATH": fake + ":" + os.environ["PATH"], "FAKE_CACHED": cached}
            if destdir:
                env["DESTDIR"] = destdir
            out = run(["sh", script, args.libdir], env=env, what=f"install-ldconfig.sh (DESTDIR={destdir!r})")
            ran = open(calls).read().splitlines() if os.path.exists(calls) else []
            return out, ran

        out, ran = install("/tmp/staged", args.libdir)
        if ran:
            fail(f"ldconfig ran for a --destdir install: {ran}")
        out, ran = install("", args.libdir)
        if os.getuid() != 0:
            expect(out, r"sudo ldconfig", "a user's install")
            return
        if "ldconfig " not in ran:
            fail(f"meson install did not run ldconfig (calls: {ran})")
        if "not in the loader's search path" in out:
            fail("a libdir the loader caches was reported as not searched")
        out, ran = install("", "/somewhere/else")
        expect(out, r"is not in the loader's search path", "a libdir ldconfig does not cache")


def part_python(root, readme, args):
    site = root.inside(args.python_site)
    if not os.path.exists(os.path.join(site, "tidal", "__init__.py")):
        fail(f"the Python package is not where meson said it would install it: {site}")
    if args.python_site_searched == "yes":
        # Where it will really be, python must look without being told.
        folders = run([args.python, "-E", "-c",
                       "import site, sys; print('\\n'.join(sys.path + site.getsitepackages()))"],
                      env=root.user_env(), what="the folders python searches").splitlines()
        if os.path.normpath(args.python_site) not in map(os.path.normpath, folders):
            fail(f"{args.python} does not search {args.python_site}")
    body = section(readme, "Using it from Python and PyTorch")
    example = first_block(body, "python", "the Python section").split("\n\n")[0]  # before torch
    check = example + "\nprint(tidal.__file__)\nprint(tidal.library_path())\n"
    out = run([args.python, "-c", check], env=root.user_env(True, PYTHONPATH=site),
              what="the README's Python example, with the installed package")
    for line in out.splitlines()[-2:]:
        if not line.startswith(root.dest):
            fail(f"loaded from outside the install root: {line}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("part", choices=["c", "fortran", "plugin", "python", "ldconfig"])
    for name in ("meson", "build-dir", "readme", "prefix", "libdir", "python", "python-site"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--python-site-searched", choices=["yes", "no"], required=True)
    parser.add_argument("--fortran-built", choices=["yes", "no"], default="no")
    parser.add_argument("--preload", default="")
    args = parser.parse_args()

    need("pkg-config", "the README builds programs with it")
    if args.part in ("c", "plugin"):
        need("cc", "the README builds the C examples with it")
    if args.part == "fortran":
        if args.fortran_built != "yes":
            skip("this build has no Fortran binding (meson found no usable Fortran compiler)")
        need("gfortran", "the README builds the Fortran example with it")
    if args.part == "ldconfig":
        part_ldconfig(args)
        print("OK")
        return
    with open(args.readme) as f:
        readme = f.read()
    with tempfile.TemporaryDirectory(prefix="tidal-install-") as work:
        root = Root(args, work)
        if args.part == "c":
            part_c(root, readme, args)
        elif args.part == "fortran":
            part_fortran(root, readme)
        elif args.part == "plugin":
            part_plugin(root, readme, args)
        else:
            part_python(root, readme, args)
    print("OK")


if __name__ == "__main__":
    main()
