"""Where the built sitemap is when none was named: typed by hand in a site's root,
``notify-changes --dry-run`` looks in the generators' usual output folders."""

from __future__ import annotations

from pathlib import Path

from notifier.errors import UsageError

# Hugo public/, Jekyll _site/, MkDocs site/, Astro and Vite dist/, Docusaurus build/, Next.js out/
OUTPUT_FOLDERS = ("public", "_site", "site", "dist", "build", "out")
SITEMAP_NAMES = ("sitemap.xml", "sitemap_index.xml", "sitemap-index.xml")


def find_sitemap(cwd: Path) -> Path:
    """The one built sitemap under ``cwd``'s output folders; a usage error when there is
    none or more than one (then the user names it)."""
    found = [cwd / folder / name for folder in OUTPUT_FOLDERS for name in SITEMAP_NAMES if (cwd / folder / name).is_file()]
    if len(found) == 1:
        return found[0]
    if not found:
        raise UsageError(
            "no SITEMAP given, and none found in "
            f"{', '.join(f'{folder}/' for folder in OUTPUT_FOLDERS)} here; pass the path or URL of the built sitemap, "
            "e.g. public/sitemap.xml (or set sitemap in notify-changes.toml)"
        )
    listed = ", ".join(str(path.relative_to(cwd)) for path in found)
    raise UsageError(f"no SITEMAP given, and several found: {listed}; pass the one to read")
