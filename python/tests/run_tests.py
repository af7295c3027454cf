"""ctest's entry to the Python tests: pytest over this folder, or exit 77 (skipped) with the reason."""
import os
import sys

try:
    import pytest
except ImportError as e:
    print(f"skipped: the Python tests need pytest for {sys.executable} ({e})")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
# -rs lists every skipped test with its reason (a GPU test without CuPy or PyTorch, say).
sys.exit(pytest.main(["-q", "-rs", "-p", "no:cacheprovider", here] + sys.argv[1:]))
