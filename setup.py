"""Compile every .pyx of the package. CHOCOSIM_CHECKED=1 selects the checked build:
bounds checks on, and the engine asserts legality and invariants after every move."""
import filecmp
import os
import platform
import shutil
import threading
import time
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CHECKED = os.environ.get("CHOCOSIM_CHECKED", "") not in ("", "0")
FLAVOUR = "checked" if CHECKED else "release"
# Each flavour keeps its own build tree (generated C, objects, built modules), so the
# README's test command, which installs the checked build and then the release build
# again, recompiles nothing that the Quickstart's first `pip install .` left up to date.
BUILD = Path("build") / FLAVOUR
# The modules of an in-place build (`pip install -e .`) sit in the source tree whichever
# flavour made them: this stamp says which, so that one of the other flavour rebuilds them.
INPLACE_STAMP = Path("build") / "inplace-flavour"
# x86-64-v2 (SSE4.2, POPCNT; every x86-64 CPU since 2009) gives the bots' small vector
# loops packed min/max and multiplies, which plain x86-64 lacks: about 7% on a
# heuristic's decisions.
ARCH = ["-march=x86-64-v2"] if platform.machine().lower() in ("x86_64", "amd64") else []


def _terminal():
    """The user's terminal, or None. pip shows a build's own output only with -v, so
    progress lines go to the terminal itself; without one (CI, a pipe) the build is quiet."""
    try:
        return open("/dev/tty", "w")
    except OSError:
        return None


TTY = _terminal()
START = time.monotonic()


def say(line):
    if TTY is not None:
        TTY.write(f"chocosim build ({FLAVOUR}, {time.monotonic() - START:4.0f} s): {line}\n")
        TTY.flush()


def _settled(source):
    """Cython's fresh C file, copied to where the compiler reads it unless that file holds
    the same text already, whose time then stays. pip builds in a new environment each
    time, whose Cython headers are newer than any C file, so Cython translates every
    module again; only a changed text should make the compiler run."""
    staged = Path(source)
    if not staged.is_relative_to(BUILD / "cython"):
        return source   # settled already: an editable install finalizes build_ext twice
    settled = BUILD / "c" / staged.relative_to(BUILD / "cython")
    if not (settled.exists() and filecmp.cmp(staged, settled, shallow=False)):
        settled.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(staged, settled)
    return str(settled)


class FlavouredBuildExt(build_ext):
    """build_ext on every core, rebuilding in-place modules of the other flavour, and
    saying on the terminal which module is done: a full build takes minutes."""

    def finalize_options(self):
        # Translated here, not at import: pip runs this file for metadata too.
        say("translating the Cython sources to C")
        staged = cythonize(
            self.distribution.ext_modules,
            include_path=["."],
            build_dir=str(BUILD / "cython"),
            compiler_directives={
                "language_level": 3,
                "boundscheck": CHECKED,
                "wraparound": CHECKED,
                "initializedcheck": CHECKED,
                "cdivision": True,
            },
            nthreads=os.cpu_count() or 1,
            quiet=True,
        )
        for ext in staged:
            ext.sources = [_settled(source) for source in ext.sources]
        self.distribution.ext_modules = staged
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def run(self):
        if self.inplace and (not INPLACE_STAMP.exists() or INPLACE_STAMP.read_text().strip() != FLAVOUR):
            self.force = True
        self._done = 0
        self._lock = threading.Lock()   # modules finish on several threads
        say(f"compiling {len(self.extensions)} C modules on {self.parallel} core(s)")
        super().run()
        if self.inplace:
            INPLACE_STAMP.parent.mkdir(exist_ok=True)
            INPLACE_STAMP.write_text(FLAVOUR + "\n")

    def build_extension(self, ext):
        super().build_extension(ext)
        with self._lock:
            self._done += 1
            say(f"{self._done:2d}/{len(self.extensions)} {ext.name}")


extensions = [
    Extension(
        ".".join(path.with_suffix("").parts),
        [str(path)],
        define_macros=[("CHOCOSIM_CHECKED", "1")] if CHECKED else [],
        extra_compile_args=(["-O3"] if not CHECKED else ["-O1", "-g"]) + ARCH,
    )
    for top in ("simcore", "strategies")
    for path in sorted(Path(top).rglob("*.pyx"))
]

setup(
    ext_modules=extensions,
    cmdclass={"build_ext": FlavouredBuildExt},
    options={"build": {"build_base": str(BUILD)}},
)
