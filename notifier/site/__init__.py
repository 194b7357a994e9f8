"""What the build says about its pages: the files it holds (folder), the pages and their heads, robots.txt and the host's rules."""
