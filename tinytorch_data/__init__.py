"""The course's shipped data: plain files with checksums (``MANIFEST.json``) and their
real-format loaders (``loaders``: NumPy and the standard library only). Named so that it
clashes with nothing a student or the grader may have installed (PyPI's ``datasets``)."""
