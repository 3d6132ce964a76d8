"""`make site`, opened in the browser: every page loads with no request leaving the machine,
every image is present, every link inside the site resolves."""

from __future__ import annotations

import posixpath
from urllib.parse import urldefrag, urlparse

import pytest
from conftest import REPO, checked, new_page
from servers import static_server

from minibert.course import site as site_builder


@pytest.fixture(scope="module")
def built_site(work):
    out = work / "site"
    site = site_builder.build(REPO, out)
    assert not site.broken, f"links to nothing: {site.broken}"
    return out


def test_every_page_image_and_link_of_the_site(built_site, browser, pages):
    page = new_page(browser, pages)
    outside = []
    page.route("**/*", lambda route: (route.continue_()
                                      if urlparse(route.request.url).hostname == "127.0.0.1"
                                      else (outside.append(route.request.url), route.abort())))
    failed = []
    page.on("response", lambda r: failed.append((r.url, r.status)) if r.status >= 400 else None)
    with static_server(built_site) as base:
        todo, seen, lessons = ["/index.html"], set(), 0
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            response = page.goto(base + path, wait_until="load")
            assert response is not None and response.ok, f"{path}: {response and response.status}"
            checked["pages"] += 1
            if path.startswith("/lessons/") and path[9:11].isdigit():
                lessons += 1
                assert page.locator(".jp-Cell").count() > 10, f"{path} shows no cells"
                assert page.locator(".jp-OutputArea-output").count() > 3, f"{path}: no outputs"
            broken = page.evaluate("() => [...document.images].filter(i => !i.complete ||"
                                   " i.naturalWidth === 0).map(i => i.src.slice(0, 120))")
            assert not broken, f"{path}: images missing: {broken}"
            checked["images"] += page.evaluate("() => document.images.length")
            for href in page.evaluate("() => [...document.querySelectorAll('a[href]')]"
                                      ".map(a => a.getAttribute('href'))"):
                url = urldefrag(href).url
                if not url or urlparse(url).scheme:
                    continue                                  # an anchor or an outside link
                if url.endswith("/"):
                    url += "index.html"                       # a folder's listing
                target = posixpath.normpath(posixpath.join(posixpath.dirname(path), url))
                assert (built_site / target.lstrip("/")).is_file(), f"{path}: {href} is broken"
                checked["links"] += 1
                if target.endswith(".html"):
                    todo.append(target)
    assert lessons == len(list((REPO / "lessons").glob("[0-9][0-9]_*.ipynb")))
    assert not outside, f"the site asked for outside addresses: {sorted(set(outside))[:5]}"
    assert not failed, f"requests failed: {failed[:5]}"
