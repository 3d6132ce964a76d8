"""The course as a static web site, built offline from the executed lessons: `make site`.

    python -m minibert.course.site            # writes site/ (open site/index.html)

Every lesson is rendered by nbconvert with its stored outputs and figures; the course map
(lessons/README.md) is the index; the README (with its results tables), the lesson notes and
every library file a page links to are pages too. Links are followed from the index and the
lessons: a link to a notebook, a Markdown file or a source file goes to its page, an image is
copied, and a link to something that is not in the repository is reported (the build fails).
Nothing is fetched: MathJax comes from the jupyter-server-mathjax package; interactive widgets,
which need a kernel, are replaced by a note saying so (their plain figure is right above them).
"""

from __future__ import annotations

import argparse
import html
import os
import posixpath
import re
import shutil
import sys
from collections import deque
from pathlib import Path

from ..atomic import write_text_atomically
from . import paths

__all__ = ["Site", "build", "main"]

SITE = paths.ROOT / "site"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = ('<p class="minibert-widget"><em>An interactive widget: open this lesson in '
               "JupyterLab (<code>make lab</code>) to move its sliders; the figure above is its "
               "plain function at the lesson's setting.</em></p>")
SOURCE_SUFFIXES = {".py", ".toml", ".cfg", ".json", ".txt", ".sh", ".yml", ".yaml"}
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".svg"}
OWN = "site:"   # marks the site's own links (already relative to the page): not rewritten
LINK = re.compile(r'(?P<attr>\b(?:href|src))="(?P<url>[^"]*)"')
# A file or module named in prose, `minibert/train.py` or `minibert.interop.load`: linked.
CODE_NAME = re.compile(r'(?<!">)<code>(?P<name>(?:minibert|tests|experiments|bench|lessons)'
                       r'[./][\w./-]*\w)</code>')
STYLE = """
body.minibert-page { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto;
  padding: 0 1rem; line-height: 1.5; }
nav.minibert-nav { font-family: system-ui, sans-serif; padding: 0.5rem 1rem;
  border-bottom: 1px solid #ccc; margin-bottom: 1rem; }
nav.minibert-nav a { margin-right: 1.2rem; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 0.2rem 0.5rem; }
pre { overflow-x: auto; } img { max-width: 100%; }
"""
# The lab template without the scripts it would fetch (require.js, the widget manager, mermaid:
# the lessons draw no diagrams),
# MathJax told to use the one font the package ships, the site's navigation bar on top.
TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{% block html_head_js_requirejs %}{% endblock html_head_js_requirejs %}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
{% block html_head_js_mermaidjs %}{% endblock html_head_js_mermaidjs %}
{% block extra_css %}<style>""" + STYLE + """</style>{% endblock extra_css %}
{% block html_head_js_mathjax %}<script type="text/x-mathjax-config">
MathJax.Hub.Config({"HTML-CSS": {availableFonts: ["STIX-Web"], preferredFont: "STIX-Web",
                                 webFont: "STIX-Web", imageFont: null}});
</script>{{ super() }}{% endblock html_head_js_mathjax %}
{% block body_header %}{{ super() }}{{ resources.minibert_nav }}{% endblock body_header %}
"""


class Site:
    """Renders pages on demand, following links, so every page a link names exists."""

    def __init__(self, root: Path = paths.ROOT, out: Path = SITE):
        self.root, self.out = Path(root).resolve(), Path(out).resolve()
        self.lessons = sorted((self.root / "lessons").glob("[0-9][0-9]_*.ipynb"))
        self.queue: deque[Path] = deque()
        self.done: set[Path] = set()
        self.broken: list[tuple[str, str]] = []     # (page, link) pairs that resolve to nothing
        self.pages = 0

    # --- where a repository file goes in the site ------------------------------------------
    def site_path(self, source: Path) -> str:
        """The site-relative path (POSIX) of the page or file made from `source`."""
        relative = source.relative_to(self.root).as_posix()
        if relative == "lessons/README.md":
            return "index.html"
        if relative == "README.md":
            return "readme.html"
        if source.is_dir():
            return f"{relative}/index.html"
        if source.suffix in (".ipynb", ".md"):
            return relative[: -len(source.suffix)] + ".html"
        if source.suffix in IMAGE_SUFFIXES:
            return relative
        return relative + ".html"                      # a source file, highlighted

    def link(self, page: Path, url: str) -> str:
        """`url` as written in `page` (a repository file), rewritten for the site."""
        if url.startswith(OWN):
            return url                       # the site's own (navigation, MathJax): kept as is
        if not url or url.startswith(("#", "data:", "mailto:")) or re.match(r"^[a-z]+:", url):
            return url
        target, _, fragment = url.partition("#")
        base = page.parent.relative_to(self.root).as_posix()
        resolved = posixpath.normpath(posixpath.join(base, target))
        source = self.root / resolved
        if resolved.startswith("..") or not source.exists():
            self.broken.append((page.relative_to(self.root).as_posix(), url))
            return url
        if source not in self.done:
            self.done.add(source)
            self.queue.append(source)
        here = posixpath.dirname(self.site_path(page))
        rewritten = posixpath.relpath(self.site_path(source), here or ".")
        return rewritten + (f"#{fragment}" if fragment else "")

    def named_file(self, name: str) -> Path | None:
        """The repository file a code span names (a path, or a dotted module and attribute)."""
        if "/" in name:
            candidate = self.root / name
            return candidate if candidate.is_file() else None
        parts = name.split(".")
        while parts:
            for candidate in (self.root.joinpath(*parts).with_suffix(".py"),
                              self.root.joinpath(*parts, "__init__.py")):
                if candidate.is_file():
                    return candidate
            parts.pop()                       # `minibert.train.set_seed` -> minibert/train.py
        return None

    def link_names(self, page: Path, text: str) -> str:
        here = page.parent

        def wrap(match: re.Match) -> str:
            source = self.named_file(match["name"])
            if source is None:
                return match[0]
            url = os.path.relpath(source, here).replace(os.sep, "/")
            return f'<a href="{html.escape(url)}">{match[0]}</a>'
        return CODE_NAME.sub(wrap, text)

    def rewrite(self, page: Path, text: str) -> str:
        text = self.link_names(page, text)

        def swap(match: re.Match) -> str:
            url = html.unescape(match["url"])
            return f'{match["attr"]}="{html.escape(self.link(page, url), quote=True)}"'
        return LINK.sub(swap, text)

    def nav(self, page: Path) -> str:
        """The bar on top of every page: the map, the README, the previous and next lesson."""
        here = posixpath.dirname(self.site_path(page)) or "."

        def href(target: str) -> str:
            return OWN + posixpath.relpath(target, here)
        items = [f'<a href="{href("index.html")}">Course map</a>',
                 f'<a href="{href("readme.html")}">README and results</a>']
        if page in self.lessons:
            at = self.lessons.index(page)
            for step, label in ((-1, "previous"), (1, "next")):
                if 0 <= at + step < len(self.lessons):
                    other = self.lessons[at + step]
                    items.append(f'<a href="{href(self.site_path(other))}">{label}: '
                                 f"{other.stem}</a>")
        return f'<nav class="minibert-nav">{"".join(items)}</nav>'

    # --- rendering -------------------------------------------------------------------------
    def write(self, source: Path, text: str) -> None:
        target = self.out / self.site_path(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(target, text.replace(f'="{OWN}', '="'))
        self.pages += 1

    def standalone(self, source: Path, title: str, body: str) -> None:
        self.write(source, f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                           f"<title>{html.escape(title)}</title><style>{STYLE}</style>"
                           f'</head><body class="minibert-page">{self.nav(source)}{body}'
                           "</body></html>\n")

    def render_notebook(self, source: Path) -> None:
        import jinja2
        import nbformat
        from nbconvert import HTMLExporter

        notebook = nbformat.read(source, as_version=4)
        notebook.metadata.pop("widgets", None)     # no widget manager to fetch: see WIDGET_NOTE
        for cell in notebook.cells:
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if WIDGET_MIME in data:
                    text = "".join(data.get("text/plain", ""))
                    output["data"] = ({"text/html": WIDGET_NOTE}
                                      if text.startswith("interactive(") else
                                      {"text/plain": text})
        mathjax = posixpath.relpath("_static/mathjax/MathJax.js",
                                    posixpath.dirname(self.site_path(source)) or ".")
        exporter = HTMLExporter(
            template_name="lab", template_file="minibert_site.html.j2",
            extra_loaders=[jinja2.DictLoader({"minibert_site.html.j2": TEMPLATE})],
            mathjax_url=f"{OWN}{mathjax}?config=TeX-AMS-MML_HTMLorMML-full,Safe")
        body, _ = exporter.from_notebook_node(
            notebook, resources={"minibert_nav": self.nav(source),
                                 "metadata": {"name": source.stem}})
        self.write(source, self.rewrite(source, body))

    def render_markdown(self, source: Path) -> None:
        import mistune

        markdown = mistune.create_markdown(plugins=["table", "strikethrough", "url"],
                                           escape=False)
        text = source.read_text(encoding="utf-8")
        title = next((line.lstrip("# ").strip() for line in text.splitlines()
                      if line.startswith("#")), source.stem)
        self.standalone(source, title, self.rewrite(source, markdown(text)))

    def render_source(self, source: Path) -> None:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import TextLexer, get_lexer_for_filename
        from pygments.util import ClassNotFound

        try:
            lexer = get_lexer_for_filename(source.name)
        except ClassNotFound:
            lexer = TextLexer()
        formatter = HtmlFormatter(linenos="table", anchorlinenos=True, lineanchors="line")
        code = highlight(source.read_text(encoding="utf-8"), lexer, formatter)
        name = source.relative_to(self.root).as_posix()
        self.standalone(source, name, f"<h1><code>{html.escape(name)}</code></h1>"
                                      f"<style>{formatter.get_style_defs('.highlight')}</style>"
                                      f"{code}")

    def render_folder(self, source: Path) -> None:
        entries = sorted(p for p in source.iterdir()
                         if not p.name.startswith((".", "__")) and not p.name.endswith(".egg-info"))
        items = "".join(f'<li><a href="{html.escape(p.name + ("/" if p.is_dir() else ""))}">'
                        f"{html.escape(p.name)}</a></li>" for p in entries)
        name = source.relative_to(self.root).as_posix()
        self.standalone(source, name, self.rewrite(source / "index.html",
                                                   f"<h1>{html.escape(name)}/</h1><ul>{items}</ul>"))

    def render(self, source: Path) -> None:
        if source.is_dir():
            self.render_folder(source)
        elif source.suffix == ".ipynb":
            self.render_notebook(source)
        elif source.suffix == ".md":
            self.render_markdown(source)
        elif source.suffix in IMAGE_SUFFIXES:
            target = self.out / self.site_path(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        else:
            self.render_source(source)

    def build(self) -> None:
        if self.out.exists():
            shutil.rmtree(self.out)
        self.out.mkdir(parents=True)
        import jupyter_server_mathjax

        shutil.copytree(Path(jupyter_server_mathjax.__file__).parent / "static",
                        self.out / "_static" / "mathjax")
        for start in [self.root / "lessons" / "README.md", self.root / "README.md",
                      *self.lessons]:
            if start not in self.done:
                self.done.add(start)
                self.queue.append(start)
        while self.queue:
            self.render(self.queue.popleft())


def build(root: Path = paths.ROOT, out: Path = SITE) -> Site:
    """Build the site of the course at `root` into `out`; return it (pages, broken links)."""
    site = Site(root, out)
    site.build()
    return site


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minibert.course.site",
                                     description="Build the course's static site.")
    parser.add_argument("--out", type=Path, default=SITE, help="the folder to write (replaced)")
    args = parser.parse_args(argv)
    site = build(paths.ROOT, args.out)
    print(f"{site.pages} pages in {args.out} (open {args.out / 'index.html'})")
    if site.broken:
        for page, url in site.broken:
            print(f"broken link in {page}: {url}", file=sys.stderr)
        print(f"{len(site.broken)} link(s) point at nothing in the repository: fix them",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
