"""A rendered page on disk: the HTML written through a temp file renamed into place, and
a PDF of the same page printed by headless Chromium (the browser the report tests open
it in anyway; a pip-only PDF engine would need system libraries that `pip install .`
cannot bring)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from simcore.errors import UserError, writing
from simcore.parts import write_text

__all__ = ["write_html", "print_pdf", "find_chromium", "CHROMIUM_ENV"]

CHROMIUM_ENV = "CHOCOSIM_CHROMIUM"
_CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_PDF_TIMEOUT = 300


def find_chromium() -> str:
    """The Chromium to print PDFs with: $CHOCOSIM_CHROMIUM, else the first on PATH."""
    chosen = os.environ.get(CHROMIUM_ENV)
    found = shutil.which(chosen) if chosen else next(filter(None, map(shutil.which, _CHROMIUM_NAMES)), None)
    if not found:
        raise UserError("--pdf needs Chromium: install it (Debian: apt-get install chromium) "
                        f"or set {CHROMIUM_ENV} to its path")
    return found


def print_pdf(html: Path, pdf: Path) -> None:
    """Print an HTML file to PDF with headless Chromium: a fresh profile, no network
    services, so it reads only the (self-contained) page."""
    browser = find_chromium()
    with tempfile.TemporaryDirectory(prefix="chocosim-chromium-") as profile:
        tmp = pdf.with_name(f".{pdf.name}.tmp")
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--no-first-run", f"--user-data-dir={profile}", "--no-pdf-header-footer",
               f"--print-to-pdf={tmp}", html.resolve().as_uri()]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=_PDF_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise UserError(f"Chromium did not print {pdf} within {_PDF_TIMEOUT} s") from None
        if done.returncode != 0 or not tmp.exists() or tmp.stat().st_size == 0:
            tmp.unlink(missing_ok=True)
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise UserError(f"Chromium could not print {pdf}: {last}")
        os.replace(tmp, pdf)


def write_html(html: Path | str, text: str, pdf: Path | str | None = None) -> None:
    """Write a rendered report (through a temp file renamed into place, so a failed
    write leaves the report there before intact) and print it to PDF when asked; a
    failure to write is one line naming the file."""
    html = Path(html)
    with writing(html):
        write_text(html, text)
    if pdf is not None:
        with writing(pdf):
            Path(pdf).parent.mkdir(parents=True, exist_ok=True)
            print_pdf(html, Path(pdf))
