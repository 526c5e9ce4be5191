"""Course data: shipped files with checksums and loaders (see loaders.py, MANIFEST.json)."""
