"""Export your notebook's `#| export` cells into your own tinytorch package.

Usage:  python export.py 01          (or 1, 01_tensor, tensor)

The same as `tito module export 01`: it exports your copy in work/ once you started the
module (else the notebook in the module's folder), checks that nothing the module's cells
define went missing, and imports the result as the grader will.
"""

from __future__ import annotations

import sys

from tito_student import main  # type: ignore[import-not-found]  # beside it in the release

if __name__ == "__main__":
    sys.exit(main(["module", "export", *sys.argv[1:]]))
