"""The built report opened in headless Chromium: every plot loads, nothing is fetched from elsewhere."""

from __future__ import annotations

import shutil

import pytest

pytestmark = pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="chromium is not installed (Debian: apt-get install chromium): the rendered report was not checked")

IMAGES = "() => [...document.images].map(i => ({src: i.getAttribute('src'), complete: i.complete, "\
         "width: i.naturalWidth}))"
# Each SVG the page links to, decoded as an image by the browser.
SVGS = """async () => Promise.all([...document.querySelectorAll('a[href$=".svg"]')].map(async (a) => {
    const image = new Image();
    image.src = a.href;
    try { await image.decode(); } catch (error) { return {href: a.getAttribute('href'), width: 0}; }
    return {href: a.getAttribute('href'), width: image.naturalWidth};
}))"""
ANCHORS = "() => [...document.querySelectorAll('nav a')].map(a => [a.getAttribute('href'), "\
          "document.getElementById(a.getAttribute('href').slice(1)) !== null])"


def test_every_plot_loads_and_nothing_is_fetched(built):
    from playwright.sync_api import sync_playwright

    reports = built["reports"]
    requested = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda request: requested.append(request.url))
            page.goto((reports / "index.html").as_uri(), wait_until="load")
            images, svgs, anchors = page.evaluate(IMAGES), page.evaluate(SVGS), page.evaluate(ANCHORS)
            title = page.title()
        finally:
            browser.close()
    assert title == "scibench report"
    assert len(images) == 8
    for image in images:
        assert image["complete"] and image["width"] > 0, image
        assert (reports / image["src"]).is_file(), image
    assert [svg["href"] for svg in svgs] == [image["src"].replace(".png", ".svg") for image in images]
    for svg in svgs:
        assert svg["width"] > 0 and (reports / svg["href"]).is_file(), svg
    assert anchors and all(found for _, found in anchors), anchors
    assert requested and all(url.startswith("file://") for url in requested), requested
