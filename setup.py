"""Compile every .pyx of the package. CHOCOSIM_CHECKED=1 selects the checked build:
bounds checks on, and the engine asserts legality and invariants after every move."""
import os
import platform
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

CHECKED = os.environ.get("CHOCOSIM_CHECKED", "") not in ("", "0")
FLAVOUR = "checked" if CHECKED else "release"
# The flavour of the C files in the tree: a build of the other flavour must regenerate
# and recompile everything; a build of the same flavour only what changed.
STAMP = Path("build") / "chocosim-flavour"
FORCE = not STAMP.exists() or STAMP.read_text().strip() != FLAVOUR
# x86-64-v2 (SSE4.2, POPCNT; every x86-64 CPU since 2009) gives the bots' small vector
# loops packed min/max and multiplies, which plain x86-64 lacks: about 7% on a
# heuristic's decisions.
ARCH = ["-march=x86-64-v2"] if platform.machine().lower() in ("x86_64", "amd64") else []

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
    ext_modules=cythonize(
        extensions,
        include_path=["."],
        compiler_directives={
            "language_level": 3,
            "boundscheck": CHECKED,
            "wraparound": CHECKED,
            "initializedcheck": CHECKED,
            "cdivision": True,
        },
        force=FORCE,
        nthreads=os.cpu_count() or 1,
    ),
)

STAMP.parent.mkdir(exist_ok=True)
STAMP.write_text(FLAVOUR + "\n")
