"""Draw the README's picture from a balance report: its title, its verdict and the
figure of the first table size, as headless Chromium shows them (the rest of the
report hidden). Run it after the bundled reports are regenerated, so the picture shows
what `reports/` holds. Needs Chromium and playwright (the test extra)."""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
# Everything below the verdict but the first table size's figure.
HIDE = """
nav#contents, section#verdict ~ :not(section), section#verdict ~ section ~ section,
section#verdict ~ section > :not(figure), section#verdict ~ section > figure ~ figure { display: none !important; }
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--report", type=Path, default=ROOT / "reports" / "fabryka" / "fabryka.html",
                        help="the balance report to draw (default: the bundled Fabryka report)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "fabryka-balance.png",
                        help="the PNG to write (default: the README's picture)")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("readme_picture: needs Chromium (Debian: apt-get install chromium)")
    if not args.report.is_file():
        sys.exit(f"readme_picture: no report at {args.report}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1000, "height": 800})
        page.goto(args.report.resolve().as_uri())
        page.add_style_tag(content=HIDE)
        page.screenshot(path=str(args.out), full_page=True)
        browser.close()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
