"""One engine-version parser (``planner.engines.profiles.parse_version``): the release numbers every version rule
compares, and a key in PEP 440's order for the rules where a pre-release comes before its release.

Source: PEP 440 / packaging.python.org "Version specifiers", "Summary of permitted suffixes and relative ordering":
``1.2.0a1 < 1.2.0b1 < 1.2.0rc5 < 1.2.0 < 1.2.0.post1``, and release segments compared with trailing zeros padded
(``1.2 == 1.2.0``). ``packaging.version.Version`` (a pytest dependency) implements that order and is the oracle for
the property test."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version

from planner.engines.profiles import EngineVersion, parse_version


class TestCitedExamples:
    def test_pep440_chain(self):
        """PEP 440's order: alpha < beta < release candidate < release < post-release < next release."""
        chain = ["1.2.0a1", "1.2.0b1", "1.2.0rc5", "1.2.0", "1.2.0.post1", "1.2.1"]
        keys = [parse_version(text).key for text in chain]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)

    def test_trailing_zeros(self):
        """PEP 440: "1.2" and "1.2.0" are the same release."""
        assert parse_version("1.2").key == parse_version("1.2.0").key

    @pytest.mark.parametrize(
        "text, expected",
        [
            ("v0.10.1.1 (V1)", EngineVersion((0, 10, 1, 1))),
            ("1.2.0rc5 (the document's Engine Version list)", EngineVersion((1, 2, 0), ("rc", 5))),
            ("v0.5.4.post2", EngineVersion((0, 5, 4), None, 2)),
            ("v0.1.0a1", EngineVersion((0, 1, 0), ("a", 1))),
            ("v0.7a", EngineVersion((0, 7), ("a", 0))),
            ("0.4.3+rocm614", EngineVersion((0, 4, 3))),
            ("not stated", None),
        ],
    )
    def test_reads_the_catalog_cells(self, text, expected):
        """Cells of catalogs/reference (engine_version): the first version in the text, its suffixes read."""
        assert parse_version(text) == expected

    def test_rules_compare_the_release(self):
        """A pre-release's release numbers are its release's (the version rules compare those: SGLang's
        release-candidate rule reads ``pre`` on its own)."""
        assert parse_version("v0.5.3rc0").release == parse_version("0.5.3").release == (0, 5, 3)


releases = st.lists(st.integers(0, 30), min_size=2, max_size=4)
pres = st.one_of(st.none(), st.tuples(st.sampled_from(["a", "b", "rc"]), st.integers(0, 30)))
posts = st.one_of(st.none(), st.integers(0, 30))


def _text(release, pre, post) -> str:
    return (
        ".".join(map(str, release))
        + (f"{pre[0]}{pre[1]}" if pre else "")
        + (f".post{post}" if post is not None else "")
    )


@given(releases, pres, posts, releases, pres, posts)
def test_key_orders_as_pep440(r1, pre1, post1, r2, pre2, post2):
    """For any two versions, ``key`` orders them as packaging's PEP 440 ``Version`` does (equal included)."""
    a, b = _text(r1, pre1, post1), _text(r2, pre2, post2)
    ka, kb = parse_version(a).key, parse_version(b).key
    assert (ka < kb, ka == kb) == (Version(a) < Version(b), Version(a) == Version(b))


@given(releases, pres, posts)
def test_pre_before_release_before_post(release, pre, post):
    """The law itself: a pre-release before its release, the release before its post-releases."""
    text = ".".join(map(str, release))
    assert parse_version(text).key < parse_version(text + ".post0").key
    if pre:
        assert parse_version(text + f"{pre[0]}{pre[1]}").key < parse_version(text).key
    assert parse_version(_text(release, pre, post)).release == tuple(release)
