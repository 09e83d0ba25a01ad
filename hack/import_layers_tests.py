"""Tests of hack/import-layers.py on small crates written to a temporary folder.

Run with `python3 hack/import-layers.py --self-test` (CI does).
"""
import importlib.util
import os
import tempfile
import textwrap
import unittest

_spec = importlib.util.spec_from_file_location(
    "import_layers", os.path.join(os.path.dirname(os.path.abspath(__file__)), "import-layers.py"))
layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layers)

LAYERS_HEAD = """//! A crate.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it.
"""


class ImportLayersTests(unittest.TestCase):
    def crate(self, files):
        """Writes `files` ({path under src: text}) to a new crate folder and checks it."""
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        for path, text in files.items():
            full = os.path.join(tmp.name, "src", path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(textwrap.dedent(text))
        return layers.check_crate(tmp.name)

    def test_layered_crate_passes(self):
        problems = self.crate({
            "lib.rs": LAYERS_HEAD + "//! - `top`\n//! - `bottom`\nmod top;\nmod bottom;\n"
                                    "pub use top::Top;\n",
            "top.rs": "use crate::bottom::Bottom;\npub struct Top(Bottom);\n",
            "bottom.rs": "pub struct Bottom;\n",
        })
        self.assertEqual(problems, [])

    def test_cycle_is_reported_with_file_and_line(self):
        problems = self.crate({
            "lib.rs": LAYERS_HEAD + "//! - `a`, `b`\nmod a;\nmod b;\n",
            "a.rs": "use crate::b::B;\npub struct A;\n",
            "b.rs": "pub struct B;\n\nfn f() -> super::a::A { super::a::A }\n",
        })
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("import cycle: a, b", problems[0])
        self.assertIn("a -> b", problems[0])
        self.assertIn("src/a.rs:1", problems[0])
        self.assertIn("src/b.rs:3", problems[0])

    def test_marked_recursion_edge_is_allowed(self):
        problems = self.crate({
            "lib.rs": LAYERS_HEAD + "//! - `expr`, `stmt`\nmod expr;\nmod stmt;\n",
            "expr.rs": "use crate::stmt::Stmt;\npub enum Expr { Block(Vec<Stmt>) }\n",
            "stmt.rs": "use crate::expr::Expr; // import-cycle: a statement holds expressions\n"
                       "pub enum Stmt { Expr(Expr) }\n",
        })
        self.assertEqual(problems, [])

    def test_marker_that_closes_no_cycle_is_stale(self):
        problems = self.crate({
            "lib.rs": LAYERS_HEAD + "//! - `a`\n//! - `b`\nmod a;\nmod b;\n",
            "a.rs": "use crate::b::B; // import-cycle: not really\n",
            "b.rs": "pub struct B;\n",
        })
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("closes no cycle", problems[0])

    def test_import_up_a_row_is_a_layer_violation(self):
        problems = self.crate({
            "lib.rs": LAYERS_HEAD + "//! - `top`\n//! - `bottom`\nmod top;\nmod bottom;\n",
            "top.rs": "pub struct Top;\n",
            "bottom.rs": "use crate::top::{\n    Top,\n};\n",
        })
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("layer violation: bottom (row 2) imports top (row 1)", problems[0])
        self.assertIn("src/bottom.rs:2", problems[0])

    def test_module_missing_from_rows_and_unknown_name(self):
        problems = self.crate({
            "lib.rs": LAYERS_HEAD + "//! - `a`, `gone`\nmod a;\nmod b;\n",
            "a.rs": "",
            "b.rs": "",
        })
        self.assertEqual(len(problems), 2, problems)
        self.assertTrue(any("`b` is in no row" in p for p in problems), problems)
        self.assertTrue(any("names `gone`" in p for p in problems), problems)

    def test_crate_without_layers_section_fails(self):
        problems = self.crate({"lib.rs": "//! A crate.\nmod a;\n", "a.rs": ""})
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("no `# Layers` section", problems[0])

    def test_parent_private_import_is_followed_to_the_child(self):
        problems = self.crate({
            "lib.rs": LAYERS_HEAD + "//! - `f`\nmod f;\n",
            "f/mod.rs": "//! Folder.\n//!\n//! # Layers\n//! - `x`\n//! - `y`\nmod x;\nmod y;\n"
                        "use y::Y;\nfn g(_: x::X, _: Y) {}\n",
            "f/x.rs": "use super::Y;\npub struct X(Y);\n",
            "f/y.rs": "pub struct Y;\n",
        })
        self.assertEqual(problems, [])

    def test_folder_layers_and_parent_items(self):
        problems = self.crate({
            "lib.rs": LAYERS_HEAD + "//! - `f`\nmod f;\n",
            "f/mod.rs": "//! Folder.\n//!\n//! # Layers\n//! - `x`\n//! - `y`\nmod x;\nmod y;\n"
                        "pub use y::Y;\npub struct Own;\nfn g(_: x::X) {}\n",
            "f/x.rs": "use super::Y;\npub struct X;\n",  # a re-export, followed to `y`
            "f/y.rs": "pub struct Y;\nfn h(_: super::Own) {}\n",  # the parent's own item: upward
        })
        text = "\n".join(problems)
        self.assertIn("import cycle: f, f::x, f::y", text)
        self.assertIn("f::y -> f  (", text)
        self.assertIn("f::x -> f::y  (", text)
        self.assertNotIn("f::x -> f  (", text)
        self.assertIn("f::y imports an item f defines itself", text)

    def test_tests_comments_strings_and_quote_are_ignored(self):
        problems = self.crate({
            "lib.rs": LAYERS_HEAD + "//! - `top`\n//! - `bottom`\nmod top;\nmod bottom;\n",
            "top.rs": "pub struct Top;\n",
            "bottom.rs": "// crate::top::Top\nconst S: &str = \"crate::top\";\n"
                         "const R: &[u8] = br#\"crate::top \"quoted\"\"#;\n"
                         "/* crate::top /* nested */ crate::top */\n"
                         "fn f() { quote!(crate::top::Top); }\n"
                         "#[cfg(test)]\nfn t() -> crate::top::Top { crate::top::Top }\n"
                         "#[cfg(test)]\n#[path = \"bottom_tests.rs\"]\nmod tests;\n",
            "bottom_tests.rs": "use crate::top::Top;\n",
        })
        self.assertEqual(problems, [])


if __name__ == "__main__":
    unittest.main()
