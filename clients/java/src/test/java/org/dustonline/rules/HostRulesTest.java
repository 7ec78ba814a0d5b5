package org.dustonline.rules;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Host rules ({@code canonical_host}): the cases of Python's tests/test_host_rules.py (its
 * expected keys and deciding rules, written by hand there), the refusals, and the sites the
 * foreign-host check compares, as Python's {@code site_of_host} gives them. The conformance
 * suite's host-rules set checks the same keys against the reference on more URLs.
 */
class HostRulesTest {
    static Rule hostRule(String id, List<String> hosts, String target) {
        return new Rule(id, hosts, "", "", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, null, null, target, null);
    }

    static final List<Rule> RULES = List.of(hostRule("h", List.of("www.x.com"), "x.com"),
            new Rule("p", List.of("x.com"), "", "", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, "sid", null, null),
            new Rule("s", List.of("x.com"), "", "", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, null, "https", null),
            new Rule("r", List.of("x.com"), "^https\\:\\/\\/x\\.com\\/a\\/([0-9]+)\\/index\\.html$",
                    "https://www.x.com/a/$1", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, null, null, null));

    @Test
    void aHostRuleComesFirstAndTheCanonicalHostsRulesFollow() {
        RuleSet rs = RuleSet.of(RULES);
        assertEquals(Map.of(), rs.refused());
        String[][] cases = {
            // moved, then the canonical host's scheme, parameter and rewrite rules, and the
            // rewrite's output (on the aliased host again) moved once more
            {"http://www.x.com/a/5/index.html?sid=3", "https://x.com/a/5", "r"},
            {"https://x.com/a/5/index.html", "https://x.com/a/5", "r"},
            {"http://www.x.com:8080/q", "https://x.com:8080/q", "s"},
            {"https://www.x.com/q", "https://x.com/q", "h"},
            {"http://other.x.com/q", "http://other.x.com/q", null},
        };
        Decisions.check(rs, cases);
    }

    @Test
    void toHostReplacesTheHostOnly() {
        String[][] cases = {
            {"http://www.x.com/a?b#c", "http://x.com/a?b#c"},
            {"http://u:p@www.x.com:8080/a", "http://u:p@x.com:8080/a"},
            {"https://WWW.X.COM", "https://x.com"},
            {"http://www.x.com?q", "http://x.com?q"},
            {"not a url", "not a url"},
        };
        for (String[] c : cases) {
            assertEquals(c[1], HostRules.toHost(c[0], "x.com"), c[0]);
        }
    }

    @Test
    void hostRulesApplyOnceSoACycleFromOutsideCannotLoop() {
        RuleSet rs = RuleSet.of(List.of(hostRule("a", List.of("a.x.com"), "b.x.com"),
                hostRule("b", List.of("b.x.com"), "a.x.com")));
        assertEquals("http://b.x.com/p", rs.canonicalize("http://a.x.com/p"));
        assertEquals("http://a.x.com/p", rs.canonicalize("http://b.x.com/p"));
        assertEquals("a", rs.explain("http://a.x.com/p").rule.id);
    }

    @Test
    void aCycleWithAParameterRuleOnItsTargetMovesOnceInCanonicalizeAsInExplain() {
        // b.x.com's parameter rule changes the URL moved there: canonicalize must not read
        // it on a.x.com again. Python's canonicalize did until de553e0 (it gave the URL
        // itself); now both agree, and the conformance suite's host-rules set has the case
        // (http://a.h2.com/p?sid=1)
        RuleSet rs = RuleSet.of(List.of(hostRule("a", List.of("a.x.com"), "b.x.com"),
                hostRule("b", List.of("b.x.com"), "a.x.com"),
                new Rule("p", List.of("b.x.com"), "", "", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, "sid", null, null)));
        assertEquals("http://b.x.com/p", rs.canonicalize("http://a.x.com/p?sid=1"));
        assertEquals("http://b.x.com/p", rs.explain("http://a.x.com/p?sid=1").key);
        assertEquals("p", rs.explain("http://a.x.com/p?sid=1").rule.id);
    }

    @Test
    void theFirstHostRuleOfAHostByRuleOrderWins() {
        Rule weak = new Rule("a-weak", List.of("www.x.com"), "", "", 1, 0.0, 0, 1, Rule.ACTIVE, 0.0, null, null,
                "m.x.com", null);
        RuleSet rs = RuleSet.of(List.of(weak, hostRule("z", List.of("www.x.com"), "x.com")));
        assertEquals("http://x.com/q", rs.canonicalize("http://www.x.com/q"));
    }

    @Test
    void aHostRuleFromOutsideIsChecked() {
        Object[][] cases = {
            {hostRule("h", List.of("www.x.com"), "y.com"), "foreign-host"}, // another site: not an alias
            {hostRule("h", List.of("www.x.com"), "www.x.com"), "foreign-host"}, // itself
            {hostRule("h", List.of("WWW.X.COM."), "www.x.com"), "foreign-host"}, // itself, as host_of reads it
            {hostRule("h", List.of("x.com", "www.y.com"), "www.x.com"), "foreign-host"}, // one host elsewhere
            {hostRule("h", List.of("alice.github.io"), "bob.github.io"), "foreign-host"}, // private suffix
            // sites are compared as text: a Unicode host is not on the site of its A-labels
            {hostRule("h", List.of("www.b.xn--p1ai", "b.\u0440\u0444"), "b.xn--p1ai"), "foreign-host"},
            {hostRule("h", List.of("www.x.com"), "X.com"), "bad-host"},
            {hostRule("h", List.of("www.x.com"), "x.com/evil"), "bad-host"},
            {hostRule("h", List.of("www.x.com"), "x.com:80"), "bad-host"},
            {hostRule("h", List.of("www.x.com"), "-x.com"), "bad-host"},
            {hostRule("h", List.of("www.x.com"), "x.com."), "bad-host"},
            {hostRule("h", List.of("www.x.com"), "b\u00fccher.x.com"), "bad-host"},
            {hostRule("h", List.of("www.x.com"), "a".repeat(250) + ".com"), "bad-host"},
            {new Rule("h", List.of("www.x.com"), "^a$", "b", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, null, null, "x.com",
                    null), "bad-host"},
            {new Rule("h", List.of("www.x.com"), "", "", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, "sid", null, "x.com", null),
                    "bad-host"},
            {new Rule("h", List.of("www.x.com"), "", "", 3, 0.0, 0, 1, Rule.ACTIVE, 0.0, null, "https", "x.com",
                    null), "bad-host"},
        };
        for (Object[] c : cases) {
            Rule r = (Rule) c[0];
            RuleSet rs = RuleSet.of(List.of(r));
            assertEquals(Map.of((String) c[1], 1), rs.refused(), r.canonicalHost);
            assertEquals("http://www.x.com/a", rs.canonicalize("http://www.x.com/a"));
        }
        // an empty canonical_host is no host rule (a rewrite rule whose context matches nothing)
        RuleSet empty = RuleSet.of(List.of(hostRule("h", List.of("www.x.com"), "")));
        assertEquals(Map.of(), empty.refused());
        assertEquals("http://www.x.com/", empty.canonicalize("http://www.x.com/"));
        // a retired host rule is not checked, as in Python (it applies to nothing)
        Rule retired = new Rule("h", List.of("www.x.com"), "", "", 3, 0.0, 0, 1, Rule.RETIRED, 0.0, null, null,
                "y.com", null);
        assertEquals(Map.of(), RuleSet.of(List.of(retired)).refused());
        // admitted: numbered hosts, a co.uk site, an IDN site written with A-labels
        for (Rule ok : List.of(hostRule("n", List.of("ichef-1.x.com", "ichef-2.x.com"), "ichef.x.com"),
                hostRule("u", List.of("www.b.co.uk"), "b.co.uk"),
                hostRule("i", List.of("www.b.xn--p1ai"), "b.xn--p1ai"))) {
            assertEquals(Map.of(), RuleSet.of(List.of(ok)).refused(), ok.id);
        }
    }

    @Test
    void aRuleBookUpdateRetiresAHostRule() {
        RuleBook book = new RuleBook();
        for (Rule r : RULES) {
            book.update(r);
        }
        assertEquals("https://x.com/q", book.ruleset().canonicalize("https://www.x.com/q"));
        assertTrue(book.update(new Rule("h", List.of("www.x.com"), "", "", 3, 0.0, 0, 2, Rule.RETIRED, 0.0, null,
                null, "x.com", null)));
        assertEquals("https://www.x.com/q", book.ruleset().canonicalize("https://www.x.com/q"));
        RuleException e = org.junit.jupiter.api.Assertions.assertThrows(RuleException.class,
                () -> book.apply("f".getBytes(StandardCharsets.UTF_8),
                        ("{\"id\":\"f\",\"hosts\":[\"www.x.com\"],\"context\":\"\",\"transformation\":\"\","
                                + "\"canonical_host\":\"evil.com\"}").getBytes(StandardCharsets.UTF_8)));
        assertEquals("foreign-host", e.reason());
        assertEquals(Map.of("foreign-host", 1), book.refused());
    }

    @Test
    void recordsReadCanonicalHost() {
        Rule r = Rule.parse("{\"id\":\"h\",\"hosts\":[\"www.x.com\"],\"context\":\"\",\"transformation\":\"\","
                + "\"canonical_host\":\"x.com\"}");
        assertEquals("x.com", r.canonicalHost);
        assertTrue(r.isHostRule());
        assertNull(Rule.parse("{\"id\":\"h\",\"hosts\":[],\"context\":\"\",\"transformation\":\"\"}").canonicalHost);
        RuleException e = org.junit.jupiter.api.Assertions.assertThrows(RuleException.class, () -> Rule.parse(
                "{\"id\":\"h\",\"hosts\":[],\"context\":\"\",\"transformation\":\"\",\"canonical_host\":null}"));
        assertEquals("not-a-rule", e.reason());
    }

    /** Python's site_of_host on each host (tldextract 5.4.0, its bundled list). */
    @Test
    void sitesAreTheReferences() {
        String[][] cases = {
            {"www.x.com", "x.com"}, {"x.com", "x.com"}, {"a.b.co.uk", "b.co.uk"}, {"co.uk", "co.uk"},
            {"alice.github.io", "alice.github.io"}, {"github.io", "github.io"}, {"a.b.ck", "a.b.ck"},
            {"www.ck", "www.ck"}, {"a.www.ck", "www.ck"}, {"a.city.kobe.jp", "city.kobe.jp"},
            {"a.x.kobe.jp", "a.x.kobe.jp"}, {"a.b.xn--p1ai", "b.xn--p1ai"}, {"a.b.XN--P1AI", "b.XN--P1AI"},
            {"a.b.xn---p1ai", "a.b.xn---p1ai"}, {"a.b.xn--p1ai-", "a.b.xn--p1ai-"},
            {"a.b.xn--55qx5d.xn--j6w193g", "b.xn--55qx5d.xn--j6w193g"},
            {"a.b.\u516c\u53f8.\u9999\u6e2f", "b.\u516c\u53f8.\u9999\u6e2f"},
            {"a.b.xn--3e0b707e", "b.xn--3e0b707e"}, {"127.0.0.1", "127.0.0.1"}, {"[::1]", "[::1]"},
            {"localhost", "localhost"}, {"a.unknowntld", "a.unknowntld"}, {"a\u3002b\uff0ecom", "b.com"},
            {" a.com", "a.com"}, {"a.com:80", "a.com"}, {"u@b.com", "b.com"}, {"http://c.d.com/x", "d.com"},
            {"a..com", "a..com"}, {".com", ".com"}, {"xn--bcher-kva.de", "xn--bcher-kva.de"},
        };
        for (String[] c : cases) {
            assertEquals(c[1], Sites.siteOfHost(c[0]), c[0]);
        }
    }

    @Test
    void punycodeIsPythons() {
        // "bücher", "рф", "香港", "公司", and mixed: str.encode("punycode") in Python
        String[][] cases = {{"b\u00fccher", "bcher-kva"}, {"\u0440\u0444", "p1ai"}, {"\u9999\u6e2f", "j6w193g"},
            {"\u516c\u53f8", "55qx5d"}, {"a\u00e9b\u00e9c\u00fc", "abc-bmab9i"}};
        for (String[] c : cases) {
            assertEquals(c[1], Punycode.encode(c[0]), c[0]);
        }
    }

    /**
     * The jar's list is the snapshot the Python reference reads: a tldextract upgrade that
     * changes it must be copied here, or the readers disagree about sites. Skipped when no
     * virtualenv is found (-Dpsl.snapshot=path names the file).
     */
    @Test
    void theListIsTldextractsSnapshot() throws IOException {
        Path snapshot = findSnapshot();
        assumeTrue(snapshot != null, "no tldextract snapshot found (../../.venv)");
        byte[] ours;
        try (InputStream in = Sites.class.getResourceAsStream("public_suffix_list.dat")) {
            ours = in.readAllBytes();
        }
        assertArrayEquals(Files.readAllBytes(snapshot), ours,
                "copy " + snapshot + " to src/main/resources/org/dustonline/rules/public_suffix_list.dat");
    }

    static Path findSnapshot() throws IOException {
        String given = System.getProperty("psl.snapshot");
        if (given != null) {
            return Path.of(given);
        }
        Path lib = Path.of("../../.venv/lib");
        if (!Files.isDirectory(lib)) {
            return null;
        }
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> pythons = Files.newDirectoryStream(lib, "python3*")) {
            for (Path p : pythons) {
                Path f = p.resolve("site-packages/tldextract/.tld_set_snapshot");
                if (Files.isRegularFile(f)) {
                    found.add(f);
                }
            }
        }
        return found.isEmpty() ? null : found.get(0);
    }
}
