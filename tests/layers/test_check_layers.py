#!/usr/bin/env python3
"""scripts/check_layers.py on small trees of its own: a tree that keeps its table passes, and each
kind of arrow the table does not allow is refused with its line (the check is sharp, not only sound).

    tests/layers/test_check_layers.py      (ctest: layers_sharp)
"""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "check_layers.py")

DOC = """# Layers

| layer | folder | what it holds | depends on |
| --- | --- | --- | --- |
| ir | `src/ir` | the graph | - |
| exec | `src/exec` | the executor | ir |
| app | `src/app` | the commands | all of the above |
| binaries | `apps/` | main() | app |
| tests | `tests` | the tests | all of the above |

{extra}
"""

# A tree that keeps the table: public headers under include/gexec/, a private one beside exec's
# sources, and a test that reaches it (white-box tests may).
CLEAN = {
    "include/gexec/status.hpp": "",
    "include/gexec/ir/graph.hpp": '#include "gexec/status.hpp"\n',
    "src/ir/graph.cpp": '#include "gexec/ir/graph.hpp"\n#include <vector>\n',
    "include/gexec/exec/executor.hpp": '#include "gexec/ir/graph.hpp"\n',
    "src/exec/plan.hpp": '#include "gexec/ir/graph.hpp"\n',
    "src/exec/executor.cpp": '#include "gexec/exec/executor.hpp"\n#include "plan.hpp"\n',
    "include/gexec/app/run.hpp": '#include "gexec/exec/executor.hpp"\n',
    "src/app/run.cpp": '#include "gexec/app/run.hpp"\n#include "gexec/ir/graph.hpp"\n',
    "apps/tool/main.cpp": '#include "gexec/app/run.hpp"\n',
    "tests/test_plan.cpp": '#include "../src/exec/plan.hpp"\n#include "gexec/app/run.hpp"\n',
}


def check(files, extra_doc=""):
    """Runs the script on a tree of `files` (path -> text); returns (exit status, output)."""
    with tempfile.TemporaryDirectory() as root:
        tree = {"docs/architecture.md": DOC.format(extra=extra_doc), **files}
        for path, text in tree.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        p = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout + p.stderr


def changed(path, text):
    """The clean tree with one file replaced or added."""
    return {**CLEAN, path: text}


class CheckLayers(unittest.TestCase):
    def refused(self, files, *needles, extra_doc=""):
        rc, out = check(files, extra_doc)
        self.assertEqual(rc, 1, out)
        for n in needles:
            self.assertIn(n, out)
        self.assertIn("1 not allowed", out)

    def test_clean_tree_passes(self):
        rc, out = check(CLEAN)
        self.assertEqual(rc, 0, out)
        self.assertIn("0 not allowed", out)

    def test_upward_include_refused(self):
        # ir may include nothing: an arrow from ir up to exec is refused.
        self.refused(changed("src/ir/graph.cpp", '#include "gexec/ir/graph.hpp"\n#include "gexec/exec/executor.hpp"\n'),
                     'src/ir/graph.cpp: layer ir includes "gexec/exec/executor.hpp" of layer exec')

    def test_skipping_a_layer_refused(self):
        # binaries -> app only: a main() that reaches exec directly is refused.
        self.refused(changed("apps/tool/main.cpp", '#include "gexec/app/run.hpp"\n#include "gexec/exec/executor.hpp"\n'),
                     'apps/tool/main.cpp: layer binaries includes "gexec/exec/executor.hpp" of layer exec')

    def test_private_header_of_another_layer_refused(self):
        # app may use exec, but only through include/gexec/: exec's own header is refused.
        self.refused(changed("src/app/run.cpp", '#include "gexec/app/run.hpp"\n#include "../exec/plan.hpp"\n'),
                     'src/app/run.cpp: layer app includes "../exec/plan.hpp", a header of its own of layer exec')

    def test_include_of_no_file_refused(self):
        self.refused(changed("src/ir/graph.cpp", '#include "gexec/ir/graph.hpp"\n#include "gone.hpp"\n'),
                     'src/ir/graph.cpp: includes "gone.hpp", which is no file of the repository')

    def test_file_of_no_layer_refused(self):
        self.refused(changed("src/extra/x.cpp", '#include "gexec/ir/graph.hpp"\n'),
                     "src/extra/x.cpp: belongs to no layer")

    def test_environment_read_must_be_documented(self):
        reader = changed("src/exec/env.cpp", "#include <cstdlib>\nconst char* v = std::getenv(\"X\");\n")
        self.refused(reader, "src/exec/env.cpp: reads the environment (getenv)")
        rc, out = check(reader, extra_doc="`src/exec/env.cpp` reads X.")
        self.assertEqual(rc, 0, out)
        # A binary may read it without saying so.
        rc, out = check(changed("apps/tool/main.cpp", '#include "gexec/app/run.hpp"\nauto v = getenv("X");\n'))
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
