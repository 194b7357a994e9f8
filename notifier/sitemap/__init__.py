"""The sitemap reader: a file's bytes (source), its XML or text form, and what a read hands over (files)."""
