"""A working copy of the built site, for the benchmark and the tests: copying the site's
sources, serving a built site on 127.0.0.1, and listing its pages from the sitemap.

Site tooling, not the recording engine: src/recorded/ knows nothing of it. The tests
import it too (pytest's ``pythonpath`` puts scripts/ on the path).
"""

from __future__ import annotations

import functools
import gzip
import http.server
import shutil
import threading
import xml.etree.ElementTree as etree
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Everything `mkdocs build` (and Zensical) reads from the project (pyproject.toml: the targets).
SITE_SOURCES = ("mkdocs.yml", "pyproject.toml", "docs", "overrides", "snippets", "recordings")

#: What the published host (GitHub Pages) sends compressed, and so does serve_site when asked.
COMPRESSED = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".ipynb"}


def copy_site(root: Path, dst: Path, extra: tuple[str, ...] = ()) -> Path:
    """Copy the site's sources (and any ``extra`` paths) from root into dst, which may exist."""
    dst.mkdir(parents=True, exist_ok=True)
    for part in (*SITE_SOURCES, *extra):
        src = root / part
        if src.is_dir():
            shutil.copytree(src, dst / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (dst / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst / part)
    return dst


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    """The built site, quietly; gzip-compressed where the client accepts it if ``compress``,
    as a static host sends it."""

    compress = False

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        url_path = self.path.split("?", 1)[0].split("#", 1)[0]
        path = Path(self.translate_path(self.path))
        if path.is_dir() and url_path.endswith("/"):
            path = path / "index.html"
        if (
            self.compress
            and path.is_file()
            and path.suffix in COMPRESSED
            and "gzip" in self.headers.get("Accept-Encoding", "")
        ):
            body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(str(path)))
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


@contextmanager
def serve_site(site: Path, compress: bool = False) -> Iterator[str]:
    """The folder over HTTP on 127.0.0.1 at a free port; yields the base URL."""
    handler = type("_Handler", (_SiteHandler,), {"compress": compress})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def site_pages(site: Path) -> list[str]:
    """Every page in the built site's sitemap, relative to its root ("" is the home page)."""
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [(loc.text or "").strip() for loc in etree.parse(site / "sitemap.xml").findall("s:url/s:loc", ns)]
    home = min(locs, key=len)  # the site_url itself
    if not all(loc.startswith(home) for loc in locs):
        raise ValueError(f"{site / 'sitemap.xml'}: not every page lies under {home}: {locs}")
    return [loc[len(home) :] for loc in locs]
