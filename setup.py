"""Compile every .pyx of the package. CHOCOSIM_CHECKED=1 selects the checked build:
bounds checks on, and the engine asserts legality and invariants after every move."""
import os
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

CHECKED = os.environ.get("CHOCOSIM_CHECKED", "") not in ("", "0")

extensions = [
    Extension(
        ".".join(path.with_suffix("").parts),
        [str(path)],
        define_macros=[("CHOCOSIM_CHECKED", "1")] if CHECKED else [],
        extra_compile_args=["-O3"] if not CHECKED else ["-O1", "-g"],
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
        # The build flavour must rebuild the C files when it changes.
        force=True,
        nthreads=os.cpu_count() or 1,
    ),
)
