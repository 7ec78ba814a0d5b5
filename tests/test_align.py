"""Alignment pinned to the thesis' worked example, and the fast path to the plain algorithm."""

from hypothesis import given, settings
from hypothesis import strategies as st

from dustonline.learner.align import GAP, Consensus, align, linear_alignment, progressive_alignment, score
from dustonline.learner.tokenize import tokenize

IRS_X = "www.IRS.gov/foia/index.html"
IRS_Y = "www.irs.ustreas.gov/foia"


def test_tokenizer_thesis_example():
    # §4.1.1: http://ex.com/1.htm is 11 token sets
    assert tokenize("http://ex.com/1.htm") == ["http", ":", "/", "/", "ex", ".", "com", "/", "1", ".", "htm"]
    assert tokenize("a9_b%2F") == ["a", "9", "_", "b", "%", "2", "F"]


def test_irs_pair_reproduces_table_4_1():
    total, cons = align(Consensus.of_url(IRS_X), Consensus.of_url(IRS_Y))
    assert total == 7  # bottom-right cell of Figure 4.1
    L = GAP
    assert cons.sets() == [
        {"www"},
        {"."},
        {"irs", "IRS"},
        {".", L},
        {"ustreas", L},
        {"."},
        {"gov"},
        {"/"},
        {"foia"},
        {"/", L},
        {"index", L},
        {".", L},
        {"html", L},
    ]


def test_scoring_is_jaccard_with_type_check():
    a = Consensus.of_url("IRS")
    b = Consensus.of_url("irs")
    c = Consensus.of_url("gov")
    d = Consensus.of_url("42")
    from dustonline.learner.align import _keys

    assert score(_keys(a)[0], _keys(b)[0]) == 1.0  # case-insensitive (Figure 4.1)
    assert score(_keys(a)[0], _keys(c)[0]) == 0.0  # same type, no overlap
    assert score(_keys(a)[0], _keys(d)[0]) == -1.0  # no shared type


def _reference(x: Consensus, y: Consensus):
    """Eq. 2.1 over the whole matrix, traceback diagonal > left > up: the plain algorithm."""
    from dustonline.learner.align import _keys, _merge

    xk, yk = _keys(x), _keys(y)
    m, n = len(xk), len(yk)
    S = [[0.0] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            S[i][j] = max(S[i - 1][j - 1] + score(xk[i - 1], yk[j - 1]), S[i - 1][j], S[i][j - 1])
    pairs, i, j = [], m, n
    while i > 0 and j > 0:
        if S[i][j] == S[i - 1][j - 1] + score(xk[i - 1], yk[j - 1]):
            pairs.append((i, j))
            i -= 1
            j -= 1
        elif S[i][j] == S[i][j - 1]:
            pairs.append((0, j))
            j -= 1
        else:
            pairs.append((i, 0))
            i -= 1
    pairs += [(0, jj) for jj in range(j, 0, -1)] + [(ii, 0) for ii in range(i, 0, -1)]
    from dustonline.learner.align import compact_gaps

    return S[m][n], _merge(x, y, compact_gaps(pairs[::-1], xk, yk))


url_text = st.text(alphabet="ab1/.?=&_X", min_size=0, max_size=14)


@settings(max_examples=400, deadline=None)
@given(url_text, url_text, url_text)
def test_trimmed_alignment_equals_full_matrix(a, b, c):
    x = Consensus.of_url("h://" + a)
    y = Consensus.of_url("h://" + b)
    assert align(x, y) == _reference(x, y)
    # also consensus against consensus (DUSTER merges aligned groups)
    xy = align(x, y)[1]
    z = Consensus.of_url("h://" + c)
    assert align(z, xy) == _reference(z, xy)


def test_linear_alignment_is_incremental_and_deterministic():
    urls = ["http://a.com/x?id=5", "http://a.com/x?id=5&sid=ab12", "http://www.a.com/x?id=5"]
    one = linear_alignment(urls)
    assert one == linear_alignment(list(urls))
    assert one.n == 3 and all(len(r) == len(one.rows[0]) for r in one.rows)
    # only the first K take part
    assert linear_alignment(urls + ["http://b.org/zzz"], k=3) == one
    # every aligned row spells its URL back when gaps are removed
    assert sorted("".join(r) for r in one.rows) == sorted(urls)


def test_progressive_alignment_covers_all_urls():
    urls = ["http://a.com/p/1", "http://www.a.com/p/1", "http://a.com/p/1/", "https://a.com/p/1"]
    cons = progressive_alignment(urls)
    assert sorted("".join(r) for r in cons.rows) == sorted(urls)
    assert progressive_alignment(urls) == cons


def test_appended_parameter_stays_one_gap_run():
    """/x?id=5 vs /x?id=5&sid=a5f: the 5 of id pairs with the 5 of id, not of the session."""
    _, cons = align(Consensus.of_url("http://a.com/x?id=5&sid=a5f"), Consensus.of_url("http://a.com/x?id=5"))
    short = next(r for r in cons.rows if "sid" not in r)
    tail = short[short.index("5") + 1 :]
    assert tail and all(t == GAP for t in tail)


@settings(max_examples=300, deadline=None)
@given(url_text, url_text, url_text, url_text)
def test_native_and_python_kernels_agree(a, b, c, d):
    """The C kernel (built by setup.py) and _dp_py give the same matrix middle, pair for
    pair; the consensus side holds multi-token (Jaccard-scored) columns."""
    from dustonline.learner import align as A

    xy = align(Consensus.of_url("h://" + a), Consensus.of_url("h://" + b))[1]
    xyz = align(Consensus.of_url("h://" + c), xy)[1]
    w = A._keys(Consensus.of_url("h://" + d))
    for other in (A._keys(xy), A._keys(xyz)):
        for p in (0, 2):
            assert A._dp(w, other, p, score) == A._dp_py(w, other, p, score)
            assert A._dp(other, w, p, score) == A._dp_py(other, w, p, score)


def test_native_kernels_are_built_where_a_compiler_is():
    """setup.py builds the C kernels wherever a C compiler is present (CI included); a
    build that broke silently would leave the learner on the slower pure-Python twins."""
    import os
    import shutil

    import pytest

    from dustonline.learner import align as A
    from dustonline.learner import clusters as C

    if os.environ.get("DUSTONLINE_PURE_PYTHON") or not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("pure Python asked for, or no C compiler on this machine")
    assert A.NATIVE and C._native is not None
