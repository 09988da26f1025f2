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
        # s174: the check moved into the loader (EmptyCatalogFolderError), whose message also says what is expected
        assert said.startswith(f"catalog not reloaded: {empty}: no *.toml catalog files in this folder; give "), said
        assert str(empty) not in xf.PLANNER_RELOAD()  # not kept as an added folder


class TestWorkbookPrice:
    def test_a_price_past_the_bound_names_the_cell_not_a_scenario_field(self, tmp_path):
        """A what-if workbook whose price cell holds 1e300: the reader passed it on and the user read about
        'option #1.cloud_usd_per_gpu_hour', a field they never typed; now the cell and the bound (US$ 10,000 per
        GPU-hour, planner.units.MAX_RENT_USD_PER_GPU_HOUR, as `plan --price` and a scenario's rent) are named."""
        import openpyxl
        from test_hostile import WORKBOOK

        wb = openpyxl.load_workbook(WORKBOOK)
        sheet, ref = next(iter(wb.defined_names["in_price"].destinations))
        wb[sheet][ref.replace("$", "")].value = 1e300
        path = tmp_path / "edited.xlsx"
        wb.save(path)
        said = one_line(run("export", str(path), "-o", "-", "--format", "md", "-q"), 2)
        # s174: the bound's words are planner.units.RENT_ACCEPTED's (a rent of 0 is refused, as a scenario refuses it)
        assert said.endswith("(Price per GPU-hour) must be above 0 and at most 10,000 US$ per GPU-hour; got 1e+300"), (
            said
        )

    def test_the_price_cells_validation_has_the_same_bound(self):
        """The Inputs sheet let Excel take up to US$ 1,000,000 per GPU-hour that every reader of the file refuses."""
        from planner.units import MAX_RENT_USD_PER_GPU_HOUR
        from planner.workbook.inputs import NUMBER_CHECKS

        kind, low, high, _, error = NUMBER_CHECKS["money"]
        # s174: above 0 (Excel's "between" is inclusive: its floor is 1e-6, as the rate cell's), as every reader says
        assert (low, high) == (0.000001, MAX_RENT_USD_PER_GPU_HOUR) and f"{high:,}" in error
