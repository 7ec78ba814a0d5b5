package org.dustonline.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Path-edit rules ({@code normalize}): the cases of Python's tests/test_path_edits.py (its
 * expected URLs, keys and deciding rules, written by hand there), what {@code applicable}
 * lists, and the refusals. The conformance suite's path-edits set checks keys and deciding
 * rules against the reference on more URLs.
 */
class PathEditsTest {
    static final Set<String> ALL = Set.of("trailing-slash", "empty-query", "last-segment:index.html");
    static final Set<String> CASE = Set.of("lowercase-path", "last-segment:index.html");

    static Rule edit(String id, String edit, List<String> hosts) {
        return new Rule(id, hosts, "", "", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, null, null, null, edit, null);
    }

    static Rule edit(String id, String edit) {
        return edit(id, edit, List.of("x.com"));
    }

    static final List<Rule> RULES = List.of(edit("e-slash", "trailing-slash"), edit("e-index", "last-segment:index.html"),
            new Rule("p", List.of("x.com"), "", "", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, "sid", null, null),
            HostRulesTest.hostRule("h", List.of("www.x.com"), "x.com"),
            new Rule("r", List.of("x.com"), "^http\\:\\/\\/x\\.com\\/news\\/([0-9]+)\\/$", "http://x.com/n/$1", 9, 0.0, 0,
                    1, Rule.ACTIVE, 0.0, null, null, null));

    @Test
    void eachEditOnItsOwn() {
        String[][] cases = {
            {"http://x.com/a/", "http://x.com/a"},
            {"http://x.com/", "http://x.com/"}, // the root keeps its slash
            {"http://x.com", "http://x.com"},
            {"http://x.com/a/index.html", "http://x.com/a"},
            {"http://x.com/index.html", "http://x.com/"},
            {"http://x.com/a/xindex.html", "http://x.com/a/xindex.html"}, // whole segments only
            {"http://x.com/index.html/a", "http://x.com/index.html/a"}, // the last one only
            {"http://x.com/a/?", "http://x.com/a"},
            {"http://x.com/a?#f", "http://x.com/a#f"},
            {"http://x.com/a?b", "http://x.com/a?b"}, // a query that is not empty stays
            {"http://x.com/a/index.html?q=1", "http://x.com/a?q=1"},
            {"http://x.com/a#/b/", "http://x.com/a#/b/"}, // the fragment is not the path
            {"http://x.com?", "http://x.com"},
        };
        for (String[] c : cases) {
            assertEquals(c[1], PathEdits.apply(c[0], ALL), c[0]);
        }
    }

    @Test
    void lowercasePathLowersTheAsciiLettersOfThePathOnly() {
        String[][] cases = {
            {"http://X.com/A/B%2Fc?Q=A#F", "http://X.com/a/b%2fc?Q=A#F"}, // the path only
            {"http://x.com/A/Index.html", "http://x.com/a/"}, // lowered first, then the segment
            {"http://x.com/\u00c9t\u00c9", "http://x.com/\u00c9t\u00c9"}, // ASCII letters only
            // where Java's toLowerCase would differ: dotted I, Kelvin sign, fullwidth A
            {"http://x.com/\u0130\u212a\uff21Z", "http://x.com/\u0130\u212a\uff21z"},
        };
        for (String[] c : cases) {
            assertEquals(c[1], PathEdits.apply(c[0], CASE), c[0]);
        }
    }

    @Test
    void editsApplyInOneDocumentedOrder() {
        assertEquals(List.of("empty-query", "last-segment:index.html", "trailing-slash"),
                PathEdits.applied("http://x.com/a/index.html?", ALL));
        assertEquals("http://x.com/a/", PathEdits.apply("http://x.com/a/index.html", Set.of("last-segment:index.html")));
        assertEquals("http://x.com/a/index.html", PathEdits.apply("http://x.com/a/index.html", Set.of("trailing-slash")));
        // the literals by code point, as Python sorts them: only one can match a URL
        assertEquals(List.of("lowercase-path", "last-segment:b"),
                PathEdits.applied("http://x.com/A/b", Set.of("last-segment:b", "last-segment:a", "lowercase-path")));
    }

    @Test
    void queryNamesAreLoweredValuesAndTheRestKept() {
        Set<String> names = Set.of("lowercase-query-names");
        assertEquals("http://X.com/A?id=B&sort=Up#F", PathEdits.apply("http://X.com/A?ID=B&Sort=Up#F", names));
        assertEquals("http://x.com/a?a&b=&=C", PathEdits.apply("http://x.com/a?A&B=&=C", names));
        assertEquals("http://x.com/a?x=Y=Z&&q", PathEdits.apply("http://x.com/a?X=Y=Z&&Q", names));
        assertEquals("http://x.com/a?\u00c9t\u00c9=1", PathEdits.apply("http://x.com/a?\u00c9T\u00c9=1", names));
        assertEquals("http://x.com/A?", PathEdits.apply("http://x.com/A?", names));
        assertEquals("http://x.com/A#Q=B", PathEdits.apply("http://x.com/A#Q=B", names));
        assertEquals(List.of("lowercase-path", "lowercase-query-names"),
                PathEdits.applied("http://x.com/A/?Q=1", Set.of("lowercase-path", "lowercase-query-names", "empty-query")));
    }

    @Test
    void sortQuerySortsPartsByNameAndKeepsEachNamesOrder() {
        Set<String> sort = Set.of("sort-query");
        assertEquals("http://x.com/a?a=1&b=2#z=0&y=1", PathEdits.apply("http://x.com/a?b=2&a=1#z=0&y=1", sort));
        assertEquals("http://x.com/a?a=2&a=1&b=1&b=0", PathEdits.apply("http://x.com/a?b=1&a=2&b=0&a=1", sort));
        assertEquals("http://x.com/a?=c&&A=1&a=&b", PathEdits.apply("http://x.com/a?b&a=&=c&&A=1", sort));
        assertEquals("http://x.com/a?z=2&\u00e9=1", PathEdits.apply("http://x.com/a?\u00e9=1&z=2", sort));
        // by code point: U+1F600 (a surrogate pair in Java) after U+FB01
        assertEquals("http://x.com/a?\ufb01=1&\ud83d\ude00=2",
                PathEdits.apply("http://x.com/a?\ud83d\ude00=2&\ufb01=1", sort));
        assertEquals("http://x.com/a?", PathEdits.apply("http://x.com/a?", sort));
        assertEquals(List.of("lowercase-query-names", "sort-query"),
                PathEdits.applied("http://x.com/a?b=1&A=2", Set.of("lowercase-query-names", "sort-query", "empty-query")));
    }

    @Test
    void onlyTheFormatsEditsAreEdits() {
        Object[][] cases = {
            {"trailing-slash", true}, {"lowercase-path", true}, {"lowercase-query-names", true}, {"empty-query", true},
            {"sort-query", true}, {"bare-tokens", true}, {"bare-token", false},
            {"last-segment:default.aspx", true}, {"last-segment:", false}, {"last-segment:a/b", false},
            {"last-segment:a?b", false}, {"last-segment:a#b", false}, {"lowercase", false}, {"", false},
        };
        for (Object[] c : cases) {
            assertEquals(c[1], PathEdits.check((String) c[0]), (String) c[0]);
        }
    }

    @Test
    void pathEditsComeAfterParametersAndBeforeRewrites() {
        RuleSet rs = RuleSet.of(RULES);
        assertEquals(Map.of(), rs.refused());
        String[][] cases = {
            {"http://www.x.com/a/index.html?sid=1", "http://x.com/a", "p"},
            {"http://x.com/a/", "http://x.com/a", "e-slash"},
            {"http://x.com/a/index.html", "http://x.com/a", "e-index"},
            // a rewrite rule learned with the slash in its context still decides: tried on the
            // URL as given when none applies to the edited one
            {"http://x.com/news/7/", "http://x.com/n/7", "r"},
            {"http://other.com/a/", "http://other.com/a/", null},
        };
        Decisions.check(rs, cases);
    }

    @Test
    void applicableListsTheEditsThatChangeTheUrlInTheirOrder() {
        RuleSet rs = RuleSet.of(RULES);
        assertEquals(List.of("h", "p", "e-index", "e-slash"), ids(rs.applicable("http://www.x.com/a/index.html?sid=1")));
        assertEquals(List.of("e-slash", "r"), ids(rs.applicable("http://x.com/news/7/")));
        assertEquals(List.of(), ids(rs.applicable("http://x.com/a")));
        assertEquals(List.of(), ids(rs.applicable("http://other.com/a/")));
        RuleSet y = RuleSet.of(List.of(edit("y-slash", "trailing-slash", List.of("y.com")),
                edit("y-lower", "lowercase-path", List.of("y.com")),
                new Rule("y-s", List.of("y.com"), "", "", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, null, "https", null)));
        assertEquals(List.of("y-s", "y-lower", "y-slash"), ids(y.applicable("http://y.com/A/")));
        assertEquals(List.of("y-lower"), ids(y.applicable("https://y.com/A")));
        assertEquals("y-s", y.explain("http://y.com/A/").rule.id);
        assertEquals("y-lower", y.explain("https://y.com/A/").rule.id);
    }

    @Test
    void ofTwoRulesOfOneEditTheFirstByRuleOrderDecides() {
        Rule weak = new Rule("a-weak", List.of("x.com"), "", "", 1, 0.0, 0, 1, Rule.ACTIVE, 0.0, null, null, null,
                "trailing-slash", null);
        RuleSet rs = RuleSet.of(List.of(weak, edit("z", "trailing-slash")));
        assertEquals("z", rs.explain("http://x.com/a/").rule.id);
    }

    @Test
    void aBadEditFromOutsideIsRefused() {
        Rule[] bad = {
            edit("e", "last-segment:../x"), edit("e", "lowercase"), edit("e", "last-segment:"),
            new Rule("e", List.of("x.com"), "^a$", "", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, null, null, null,
                    "trailing-slash", null),
            new Rule("e", List.of("x.com"), "", "b", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, null, null, null,
                    "trailing-slash", null),
            new Rule("e", List.of("x.com"), "", "", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, "sid", null, null,
                    "trailing-slash", null),
        };
        for (Rule r : bad) {
            RuleSet rs = RuleSet.of(List.of(r));
            assertEquals(Map.of("bad-edit", 1), rs.refused(), r.normalize);
            assertEquals("http://x.com/a/", rs.canonicalize("http://x.com/a/"));
        }
        // a host rule with an edit: one action per record
        Rule host = new Rule("h", List.of("www.x.com"), "", "", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, null, null, "x.com",
                "trailing-slash", null);
        assertEquals(Map.of("bad-host", 1), RuleSet.of(List.of(host)).refused());
        // an empty normalize is no edit (a rewrite rule whose context matches nothing), as in Python
        assertEquals(Map.of(), RuleSet.of(List.of(edit("e", ""))).refused());
    }

    @Test
    void aRuleBookRefusesABadEditAndRetiresAGoodOne() {
        RuleBook book = new RuleBook();
        for (Rule r : RULES) {
            book.update(r);
        }
        assertEquals("http://x.com/a", book.ruleset().canonicalize("http://x.com/a/"));
        RuleException e = assertThrows(RuleException.class, () -> book.apply("b".getBytes(StandardCharsets.UTF_8),
                ("{\"id\":\"b\",\"hosts\":[\"x.com\"],\"context\":\"\",\"transformation\":\"\","
                        + "\"normalize\":\"last-segment:a/b\"}").getBytes(StandardCharsets.UTF_8)));
        assertEquals("bad-edit", e.reason());
        assertEquals(Map.of("bad-edit", 1), book.refused());
        assertTrue(book.update(new Rule("e-slash", List.of("x.com"), "", "", 3, 0.0, 0, 2, Rule.RETIRED, 0.0, null,
                null, null, "trailing-slash", null)));
        assertEquals("http://x.com/a/", book.ruleset().canonicalize("http://x.com/a/"));
    }

    @Test
    void recordsReadNormalize() {
        Rule r = Rule.parse("{\"id\":\"e\",\"hosts\":[\"x.com\"],\"context\":\"\",\"transformation\":\"\","
                + "\"normalize\":\"empty-query\"}");
        assertEquals("empty-query", r.normalize);
        assertTrue(r.isEditRule());
        assertNull(Rule.parse("{\"id\":\"e\",\"hosts\":[],\"context\":\"\",\"transformation\":\"\"}").normalize);
        RuleException e = assertThrows(RuleException.class, () -> Rule.parse(
                "{\"id\":\"e\",\"hosts\":[],\"context\":\"\",\"transformation\":\"\",\"normalize\":1}"));
        assertEquals("not-a-rule", e.reason());
    }

    static List<String> ids(List<Rule> rules) {
        List<String> out = new ArrayList<>();
        for (Rule r : rules) {
            out.add(r.id);
        }
        return out;
    }
}
