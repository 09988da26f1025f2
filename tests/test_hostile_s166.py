"""Surface review round 2 (task s166): each defect a careless or hostile user met, as they would meet it.

Excel functions are called in Python as the add-in calls them; the CLI through ``cli_support.run``.
"""

from __future__ import annotations

from cli_support import one_line, run

from planner.catalog import load_catalog
from planner.errors import CatalogError
from planner.excel import functions as xf


class TestPlannerWhyNames:
    def test_a_misspelled_function_gets_a_did_you_mean(self):
        """=PLANNER_WHY("MAX_BATH", ...) names MAX_BATCH, as an unknown GPU names its neighbours."""
        said = xf.PLANNER_WHY("MAX_BATH", "H100", "llama3.1-8b", 4096)
        assert said.startswith("unknown function 'MAX_BATH'; did you mean MAX_BATCH"), said

    def test_the_known_list_names_each_function_once(self):
        """0.1.0's list named LOADED_RANGE twice (once from the specs, once from the reasons outside them)."""
        said = xf.PLANNER_WHY(5, "H100")
        known = said.split("known: ", 1)[1].split(", ")
        assert len(known) == len(set(known)), said
        assert "LOADED_RANGE" in known and "PLANNER_INFO" in known


class TestCatalogFolder:
    def test_a_file_given_as_the_folder_is_named_a_file(self, tmp_path):
        """A file where the catalog folder goes was 'catalog folder not found', sending the user to look for it."""
        path = tmp_path / "gpus.toml"
        path.write_text("", encoding="utf-8")
        try:
            load_catalog(path, use_env=False)
        except CatalogError as exc:
            assert str(exc) == f"{path}: a file, not a folder; give the folder that holds your *.toml catalog files"
        else:
            raise AssertionError("a file taken as a catalog folder")

    def test_planner_catalog_naming_a_file_is_one_line_saying_so(self, tmp_path, monkeypatch):
        """$PLANNER_CATALOG is read without click's folder check: the loader's message reaches the user."""
        path = tmp_path / "gpus.toml"
        path.write_text("", encoding="utf-8")
        monkeypatch.setenv("PLANNER_CATALOG", str(path))
        said = one_line(run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096"), 2)
        assert "a file, not a folder" in said, said

    def test_reload_with_a_folder_without_catalog_files_is_refused(self, tmp_path):
        """=PLANNER_RELOAD("C:\\wrong\\folder") said 'catalog reloaded' though it read nothing from there."""
        empty = tmp_path / "empty"
        empty.mkdir()
        said = xf.PLANNER_RELOAD(str(empty))
        assert said == f"catalog not reloaded: {empty}: no *.toml catalog files in this folder", said
        assert str(empty) not in xf.PLANNER_RELOAD()  # not kept as an added folder
