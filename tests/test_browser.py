"""Self-test of tests/browser.py: real headless Chromium renders a page, and the screenshot
check tells a rendered page from a blank one."""

import base64
import io

import browser
from PIL import Image

# where the image sits on the page, absolutely positioned
LEFT, TOP, W, H = 100, 120, 400, 300
RED, BLUE = (220, 20, 20), (20, 40, 220)


def _png_data_uri() -> str:
    im = Image.new("RGB", (W, H), RED)
    im.paste(BLUE, (W // 2, 0, W, H))  # left half red, right half blue
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _page(tmp_path, name, body):
    p = tmp_path / name
    p.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'>"
        f"<style>body{{margin:0;background:#fff}}</style></head><body>{body}</body></html>"
    )
    return p


def test_screenshot_shows_image_and_heading(chromium, tmp_path):
    html = _page(
        tmp_path,
        "page.html",
        "<h1 style='margin:0;padding:20px;font:bold 48px sans-serif;color:#000'>dustonline report</h1>"
        f"<img src='{_png_data_uri()}' width='{W}' height='{H}' "
        f"style='position:absolute;left:{LEFT}px;top:{TOP}px'>",
    )
    png = browser.screenshot(html, tmp_path / "page.png", width=800, height=600)
    assert png == (tmp_path / "page.png").resolve()

    whole = browser.image_stats(png)
    assert (whole["width"], whole["height"]) == (800, 600)
    # the image covers 400*300 of 800*600 = 25 %, the heading adds some
    assert 0.22 < whole["nonwhite_share"] < 0.5, whole

    img = browser.image_stats(png, box=(LEFT, TOP, LEFT + W, TOP + H))
    assert img["nonwhite_share"] > 0.99, img
    assert browser.image_stats(png, box=(LEFT + W + 10, TOP, 800, 600))["nonwhite_share"] < 0.01

    heading = browser.image_stats(png, box=(0, 0, 800, TOP))
    assert 0.02 < heading["nonwhite_share"] < 0.5, heading  # text drawn, not a filled block
    assert heading["distinct_colors"] > 5, heading  # anti-aliased glyph edges

    with Image.open(png) as im:
        rgb = im.convert("RGB")
        for (x, y), want in [((LEFT + W // 4, TOP + H // 2), RED), ((LEFT + 3 * W // 4, TOP + H // 2), BLUE)]:
            got = rgb.getpixel((x, y))
            assert all(abs(a - b) <= 8 for a, b in zip(got, want)), (x, y, got, want)

    # each half of the image is W/2 x H pixels of its colour; a colour not drawn has none
    half = W // 2 * H
    assert half <= browser.color_pixels(png, RED) < half * 1.02
    assert half <= browser.color_pixels(png, BLUE) < half * 1.02
    assert browser.color_pixels(png, (20, 200, 20)) == 0


def test_blank_page_is_blank(chromium, tmp_path):
    png = browser.screenshot(_page(tmp_path, "blank.html", ""), tmp_path / "blank.png", width=800, height=600)
    s = browser.image_stats(png)
    assert (s["width"], s["height"]) == (800, 600)
    assert s["nonwhite_share"] < 0.001, s
    assert s["distinct_colors"] <= 2, s
