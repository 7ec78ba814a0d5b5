"""Render an HTML file in real headless Chromium and look at the screenshot.

Chromium is Debian's package (/usr/bin/chromium), installed by `scripts/chromium.sh ensure`,
which scripts/test.sh runs before pytest. Tests take the `chromium` fixture (conftest.py),
which fails, never skips, when it is missing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")

# Headless, and no connection of its own: on the closed network Chromium's background
# fetches (component updates, sync, QUIC probes) are refused and can stall a run.
FLAGS = [
    "--headless",
    "--no-sandbox",  # root in CI
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",  # one CSS pixel is one screenshot pixel
]


class ChromiumMissing(RuntimeError):
    pass


def chromium_path() -> Path:
    """/usr/bin/chromium, or ChromiumMissing saying how to get it."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        raise ChromiumMissing(
            f"{CHROMIUM} not found: run scripts/chromium.sh ensure (installs Debian's chromium; needs root)"
        )
    return CHROMIUM


def screenshot(html: Path, png: Path, width: int = 1280, height: int = 2400, timeout: float = 60) -> Path:
    """Screenshot of file://<html> at a width x height window into png; returns png.

    Raises ChromiumMissing, or RuntimeError with Chromium's output when it fails, times out
    or writes no image."""
    exe = chromium_path()
    html, png = Path(html).resolve(), Path(png).resolve()
    if not html.is_file():
        raise FileNotFoundError(html)
    png.parent.mkdir(parents=True, exist_ok=True)
    png.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="dustonline-chromium-") as profile:
        cmd = [
            str(exe),
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--screenshot={png}",
            f"--window-size={width},{height}",
            html.as_uri(),
        ]
        # its own process group, so a timeout ends the renderer and GPU helpers too
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            raise RuntimeError(
                f"chromium did not finish a screenshot of {html} within {timeout}s:\n{_tail(out)}"
            ) from None
        finally:
            try:  # helpers left behind by a chromium that exited
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    if proc.returncode != 0:
        raise RuntimeError(f"chromium exited with {proc.returncode} on {html}:\n{_tail(out)}")
    if not png.is_file() or png.stat().st_size == 0:
        raise RuntimeError(f"chromium exited 0 but wrote no screenshot at {png}:\n{_tail(out)}")
    return png


def image_stats(png: Path, box: tuple[int, int, int, int] | None = None, white_tolerance: int = 16) -> dict:
    """width, height (of the whole image), distinct_colors and nonwhite_share (of box, or of
    the whole image): the share of pixels with some channel below 255 - white_tolerance, so
    a blank page is near 0. box is (left, top, right, bottom) in pixels, as Pillow's crop."""
    from PIL import Image

    with Image.open(png) as im:
        width, height = im.size
        rgb = im.convert("RGB")
    region = rgb.crop(box) if box else rgb
    n = region.width * region.height
    colors = region.getcolors(maxcolors=max(n, 1)) or []
    limit = 255 - white_tolerance
    nonwhite = sum(count for count, (r, g, b) in colors if min(r, g, b) < limit)
    return {
        "width": width,
        "height": height,
        "distinct_colors": len(colors),
        "nonwhite_share": nonwhite / n if n else 0.0,
    }


def color_pixels(png: Path, rgb: tuple[int, int, int], tolerance: int = 8) -> int:
    """How many pixels of png are within ``tolerance`` of ``rgb`` on every channel: is a
    plot's colour on screen, and how much of it."""
    from PIL import Image

    with Image.open(png) as im:
        colors = im.convert("RGB").getcolors(maxcolors=im.width * im.height) or []
    return sum(n for n, c in colors if all(abs(a - b) <= tolerance for a, b in zip(c, rgb)))


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join((text or "").strip().splitlines()[-lines:])
