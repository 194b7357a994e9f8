"""What the repository says about a page's date: git's history (git) and the source files and their front matter (source_files)."""
