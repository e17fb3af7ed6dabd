"""The engine. Its core is compiled (Cython): a checkout that was not built (a fresh
clone, or Python started in the repository's root, whose source tree then shadows the
installed package) says so in one line instead of failing on a missing submodule."""
import importlib.machinery as _machinery
import os as _os

_here = _os.path.dirname(__file__)
if not any(_os.path.exists(_os.path.join(_here, f"state{s}")) for s in _machinery.EXTENSION_SUFFIXES):
    raise ImportError(
        f"chocosim's compiled engine is not built in {_here}: Python imported the source tree "
        "(it is started in the repository's root?), not the installed package. Build it in place with "
        "`pip install -e .` (or `python setup.py build_ext --inplace`), or run from another directory")
