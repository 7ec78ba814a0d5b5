"""The rule format as a contract (issue 19, item 1): the JSON Schema of rule records, the
format version readers refuse, and the conformance suite every client must pass
(clients/conformance/), run here against the reference, RuleSet, with both engines."""

import importlib.util
import io
import json
import logging
from collections import defaultdict
from pathlib import Path

import jsonschema
import msgspec
import pytest

from dustonline.rules.book import RuleBook
from dustonline.rules.ruleset import ENGINES, Rule, RuleError, RuleSet, encode_rule, write_rules

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "clients" / "conformance"
SCHEMA = json.loads((CONF / "rule.schema.json").read_text())


def _generator():
    spec = importlib.util.spec_from_file_location("conformance_generate", CONF / "generate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def suite() -> dict[str, dict]:
    """The cases file by set: rule records, expected refusals, (url, key) cases."""
    sets: dict[str, dict] = defaultdict(lambda: {"rules": [], "refused": {}, "cases": []})
    for line in (CONF / "cases.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if "set" not in rec:
            continue
        s = sets[rec["set"]]
        if "rule" in rec:
            s["rules"].append(rec["rule"])
        elif "refused" in rec:
            s["refused"] = rec["refused"]
        elif "url" in rec:
            s["cases"].append((rec["url"], rec["key"]))
    return dict(sets)


def test_schema_is_the_rule_struct():
    """Every field of Rule, with its JSON type; required exactly where Rule has no default."""
    info = msgspec.inspect.type_info(Rule)
    fields = {f.name: f for f in info.fields}
    assert set(SCHEMA["properties"]) == set(fields)
    assert set(SCHEMA["required"]) == {n for n, f in fields.items() if f.required}
    json_type = {msgspec.inspect.StrType: "string", msgspec.inspect.IntType: "integer"}
    json_type[msgspec.inspect.FloatType] = "number"
    json_type[msgspec.inspect.ListType] = "array"
    for name, f in fields.items():
        t = f.type
        if isinstance(t, msgspec.inspect.UnionType):  # X | UNSET: optional, left out when unset
            (t,) = [x for x in t.types if not isinstance(x, msgspec.inspect.UnsetType)]
            assert name not in SCHEMA["required"] and "default" not in SCHEMA["properties"][name] or name == "format"
        assert SCHEMA["properties"][name]["type"] == json_type[type(t)], name
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_every_rule_the_learner_writes_on_the_sample_is_valid():
    rules, _ = _generator().learn_sample()
    buf = io.BytesIO()
    assert write_rules(buf, rules) > 50
    validator = jsonschema.Draft202012Validator(SCHEMA)
    records = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert [list(validator.iter_errors(r)) for r in records] == [[]] * len(records)
    assert any("drop_param" in r for r in records) and all("format" not in r for r in records)
    # the schema is not vacuous: what the reader cannot take is invalid
    bad = [{**records[0], "support": 1.5}, {**records[0], "format": 0}, {**records[0], "hosts": "a.com"}]
    bad += [{k: v for k, v in records[0].items() if k != "context"}, {**records[0], "extra": 1}]
    assert all(not validator.is_valid(r) for r in bad)


V2 = Rule(id="r-v2", hosts=["a.com"], context=r"^http\:\/\/a\.com\/(.*)$", transformation="http://a.com/x/$1", format=2)
V1 = Rule(id="r-v1", hosts=["a.com"], context=r"^http\:\/\/a\.com\/(.*)$", transformation="http://a.com/y/$1")


def test_a_record_of_an_unknown_format_is_refused_and_counted(tmp_path, caplog):
    assert "format" not in json.loads(encode_rule(V1))  # the writer leaves format 1 out: files as before
    assert json.loads(encode_rule(V2))["format"] == 2
    path = tmp_path / "rules.jsonl"
    retired = Rule(**{**msgspec.structs.asdict(V2), "id": "r-v2r", "status": "retired", "format": 3})
    write_rules(path, [V2, V1, retired])
    with caplog.at_level(logging.WARNING, logger="dustonline.rules"):
        rs = RuleSet.load(path)
    assert len(rs) == 1 and rs.canonicalize("http://a.com/p") == "http://a.com/y/p"
    assert rs.refused == {"unknown-format": 2}
    assert [i for i, _ in rs.refused_rules] == ["r-v2", "r-v2r"]
    assert f"{path}:1: rule r-v2: record format 2" in caplog.text
    assert RuleSet([V2, V1], engine="re2").refused == {"unknown-format": 1}
    with pytest.raises(RuleError) as e:
        RuleSet([V1]).upsert(Rule(**{**msgspec.structs.asdict(V1), "version": 2, "format": 2}))
    assert e.value.reason == "unknown-format" and e.value.rule_id == "r-v1"

    book = RuleBook([V2, V1])
    assert book.refused == {"unknown-format": 1} and len(book) == 1
    with pytest.raises(RuleError, match="record format 9"):
        book.apply(b"r-v1", json.dumps({**json.loads(encode_rule(V1)), "version": 5, "format": 9}).encode())
    with pytest.raises(RuleError):  # a retirement of an unknown format does not retire either
        book.apply(
            b"r-v1",
            json.dumps({**json.loads(encode_rule(V1)), "version": 6, "status": "retired", "format": 2}).encode(),
        )
    assert book.refused == {"unknown-format": 3} and book.ruleset().canonicalize("http://a.com/p") == "http://a.com/y/p"
    assert book.apply(b"r-v1", json.dumps({**json.loads(encode_rule(V1)), "version": 7, "format": 1}).encode())


def test_the_cases_file_is_what_the_generator_writes():
    """Expected keys are the reference's, recomputed from the committed inputs; after a
    change to RuleSet, run clients/conformance/generate.py and read the diff."""
    gen = _generator()
    expected = gen.render(gen.build(gen.committed_sample_rules()))
    assert (CONF / "cases.jsonl").read_text() == expected, "stale: run clients/conformance/generate.py"


@pytest.mark.parametrize("engine", ENGINES)
def test_conformance_suite(engine, tmp_path):
    """Each set's records loaded as a client loads a rules file; every key and refusal as
    the suite says. Both engines, so the suite holds for the grammar as RE2 reads it."""
    sets = suite()
    assert {
        "composition",
        "case-conversion",
        "dollars",
        "percent-encoding",
        "idn-hosts",
        "idn",
        "groups",
        "lazy",
    } <= set(sets) and {"light-normalization", "not-applicable", "record-format", "sample"} <= set(sets)
    total, wrong = 0, []
    for name, s in sets.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in s["rules"]))
        rs = RuleSet.load(path, engine=engine)
        assert rs.refused == s["refused"], name
        for url, key in s["cases"]:
            total += 1
            got = rs.canonicalize(url)
            if got != key:
                wrong.append((name, url, key, got))
    assert wrong == []
    assert total >= 400 and len(sets["sample"]["cases"]) >= 200


def test_the_idn_set_gives_every_spelling_of_a_host_one_key():
    """The suite asks every client for one key per IDN host, whatever the spelling: its
    cases of one page (Unicode in any case, punycode, trailing dot, ideographic full stop,
    default port) share their key, an ASCII one; the hosts that do not encode keep theirs."""
    cases = dict(suite()["idn"]["cases"])
    page = [u for u in cases if u.lower().endswith("/buch/7?sid=9f") and "@" not in u and ":8080" not in u]
    page = [u for u in page if "xn--bcher-kva.b" not in u and "xn--b\u00fc" not in u and ".." not in u]
    assert len(page) >= 8 and {cases[u] for u in page} == {"https://xn--bcher-kva.example/buch/7"}
    assert cases["http://M\u00fcnchen.example/a?sid=1&x=2"] == cases["http://xn--mnchen-3ya.example/a?x=2&sid=1"]
    assert cases["http://\u65e5\u672c.example/%E6%97%A5"].startswith("https://xn--wgv71a.example/")
    kept = ["http://xn--b\u00fccher.example/buch/7?sid=9f", "http://\U0001f600.example/", "http://a\u0627.example/"]
    assert all(cases[u] == u for u in kept)
