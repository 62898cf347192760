"""The site's layout, read from mkdocs.yml once: where the pages are, their order, their
published addresses. Everything that looks for pages asks here, never assumes ``docs/``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml


class _ConfigLoader(yaml.SafeLoader):
    """Reads mkdocs.yml for its nav: tags such as !ENV and !!python/name load as None."""


_ConfigLoader.add_multi_constructor("!", lambda loader, suffix, node: None)
_ConfigLoader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


@dataclass(frozen=True)
class Site:
    docs_dir: Path
    pages: tuple[str, ...]  #: every page of the nav (none without one), relative to docs_dir
    site_url: str
    use_directory_urls: bool = True

    def url(self, page: str, fragment: str = "") -> str:
        """The published address of a page, or '' when mkdocs.yml names no site_url."""
        if not self.site_url:
            return ""
        path = PurePosixPath(page).with_suffix("")
        if not self.use_directory_urls:
            url = f"{path.as_posix()}.html"
        elif path.name == "index":
            url = f"{path.parent}/".removeprefix("./")
        else:
            url = f"{path.as_posix()}/"
        url = self.site_url.rstrip("/") + "/" + url
        return f"{url}#{fragment}" if fragment else url


def _nav_pages(nav) -> Iterator[str]:
    for item in nav or []:
        value = next(iter(item.values())) if isinstance(item, dict) and len(item) == 1 else item
        if isinstance(value, str) and value.endswith(".md"):
            yield value
        elif isinstance(value, list):
            yield from _nav_pages(value)


def read_site(root: Path) -> Site:
    config_path = Path(root) / "mkdocs.yml"
    text = config_path.read_text(encoding="utf-8") if config_path.is_file() else ""  # MkDocs' defaults
    config = yaml.load(text, Loader=_ConfigLoader) or {}
    return Site(
        docs_dir=Path(root) / (config.get("docs_dir") or "docs"),
        pages=tuple(_nav_pages(config.get("nav"))),
        site_url=config.get("site_url") or "",
        use_directory_urls=config.get("use_directory_urls", True) is not False,
    )
