package org.dustonline.rules;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.logging.Logger;

/**
 * Active rules indexed by host; {@link #canonicalize(String)} gives the key Python's
 * {@code dustonline.rules.RuleSet.canonicalize} gives (the port of dustonline/rules/ruleset.py;
 * the order in docs/formats.md, "Rules"). Immutable once built, so a subscriber can swap
 * in a new one while crawler threads use the old.
 *
 * <p>A host rule ({@code canonical_host}) comes first of all: a URL of its host is read on
 * the canonical host, and that host's scheme, parameter, path-edit and rewrite rules apply;
 * once, so a cycle of host rules cannot loop. Path edits ({@code normalize}, {@link PathEdits})
 * follow the parameter rules, before rewrite rules.
 *
 * <p>Refused records (an unknown {@code format}, a context Java cannot compile, a bad
 * transformation, a host rule to a bad or foreign host, an edit that is not one of the
 * format's) are skipped, logged with the rule id and reason, and counted in
 * {@link #refused()}. Contexts are not checked against the linear-time grammar here: load
 * rules a dustonline learner wrote (docs/formats.md, "Context grammar").
 */
public final class RuleSet {
    private static final Logger LOG = Logger.getLogger("org.dustonline.rules");

    /** Python's order: descending support, then id by code points (str comparison). */
    public static final Comparator<Rule> RULE_ORDER =
            Comparator.comparingLong((Rule r) -> -r.support).thenComparing(r -> r.id, RuleSet::compareCodePoints);

    private final Map<String, CompiledRule> byId;
    private final Map<String, List<CompiledRule>> byHost = new HashMap<>();
    private final Map<String, Map<String, Rule>> drops = new HashMap<>();
    private final Map<String, Rule> https = new HashMap<>();
    private final Map<String, Rule> moves = new HashMap<>(); // host -> its host rule
    private final Map<String, Map<String, Rule>> edits = new HashMap<>(); // host -> path edit -> its rule
    private final Set<String> pre;
    // every-host parameter rules: name -> the rule, and the hosts excepted from it
    private final Map<String, Rule> every = new LinkedHashMap<>();
    private final Map<String, Set<String>> excepted = new HashMap<>();
    private final Map<String, Integer> refused;
    private final List<String> refusedRules;

    private RuleSet(Map<String, CompiledRule> byId, Map<String, Integer> refused, List<String> refusedRules) {
        this.byId = byId;
        this.refused = Collections.unmodifiableMap(new TreeMap<>(refused));
        this.refusedRules = Collections.unmodifiableList(new ArrayList<>(refusedRules));
        List<CompiledRule> ordered = new ArrayList<>(byId.values());
        ordered.sort(Comparator.comparing((CompiledRule c) -> c.rule, RULE_ORDER));
        for (CompiledRule cr : ordered) {
            String name = cr.rule.dropParam;
            String scheme = cr.rule.canonicalScheme;
            if (cr.rule.isEveryHost()) {
                if (!every.containsKey(name)) {
                    every.put(name, cr.rule);
                    java.util.HashSet<String> ex = new java.util.HashSet<>();
                    for (String h : cr.rule.exceptHosts) {
                        ex.add(Urls.aLabel(Urls.lower(h)));
                    }
                    excepted.put(name, ex);
                }
                continue;
            }
            for (String h : cr.rule.hosts) {
                String host = Urls.aLabel(Urls.lower(h)); // a Unicode host indexes under its A-labels, as Python
                if (cr.rule.isHostRule()) {
                    moves.putIfAbsent(host, cr.rule);
                } else if (cr.rule.isEditRule()) {
                    edits.computeIfAbsent(host, k -> new LinkedHashMap<>()).putIfAbsent(cr.rule.normalize, cr.rule);
                } else if (name != null && !name.isEmpty()) {
                    drops.computeIfAbsent(host, k -> new LinkedHashMap<>()).putIfAbsent(name, cr.rule);
                } else if (scheme != null && !scheme.isEmpty()) {
                    if (scheme.equals("https")) { // the one scheme rule there is; others are left out
                        https.putIfAbsent(host, cr.rule);
                    }
                } else {
                    byHost.computeIfAbsent(host, k -> new ArrayList<>()).add(cr);
                }
            }
        }
        // a rule an edit of the host already does is not tried there (Rule.subsumedBy)
        for (Map.Entry<String, Map<String, Rule>> e : edits.entrySet()) {
            List<CompiledRule> crs = byHost.get(e.getKey());
            if (crs != null) {
                crs.removeIf(cr -> cr.rule.subsumedBy != null && e.getValue().containsKey(cr.rule.subsumedBy));
            }
        }
        java.util.HashSet<String> p = new java.util.HashSet<>(drops.keySet());
        p.addAll(https.keySet());
        p.addAll(moves.keySet());
        p.addAll(edits.keySet());
        this.pre = p; // hosts whose URLs are normalized first
    }

    /** A rule set of the active {@code rules}; later records of an id replace earlier ones. */
    public static RuleSet of(Collection<Rule> rules) {
        Builder b = new Builder();
        for (Rule r : rules) {
            b.add(r, "");
        }
        return b.build();
    }

    /** A rule set over rules compiled already (RuleBook: a subscriber swapping in updates). */
    static RuleSet fromCompiled(Collection<CompiledRule> compiled) {
        Map<String, CompiledRule> byId = new LinkedHashMap<>();
        for (CompiledRule c : compiled) {
            if (c.rule.isActive()) {
                byId.put(c.rule.id, c);
            }
        }
        return new RuleSet(byId, Map.of(), List.of());
    }

    /** A rules file: one JSON record per line (blank lines skipped). A line that is not a
     * rule record ends the load (RuleException, reason not-a-rule, naming file:line). */
    public static RuleSet load(Path path) throws IOException {
        Builder b = new Builder();
        try (BufferedReader in = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            String line;
            int n = 0;
            while ((line = in.readLine()) != null) {
                n++;
                if (line.isBlank()) {
                    continue;
                }
                Rule r;
                try {
                    r = Rule.parse(line);
                } catch (RuleException e) {
                    throw new RuleException(path + ":" + n + ": " + e.getMessage(), e.reason(), e.ruleId());
                }
                b.add(r, path + ":" + n + ": ");
            }
        }
        return b.build();
    }

    /** Collects records as Python's RuleSet.load does. */
    public static final class Builder {
        private final Map<String, CompiledRule> byId = new LinkedHashMap<>();
        private final Map<String, Integer> refused = new HashMap<>();
        private final List<String> refusedRules = new ArrayList<>();

        /** One record; a refused one is logged and counted (where: a "file:line: " prefix or ""). */
        public Builder add(Rule r, String where) {
            try {
                r.checkFormat();
                if (r.isActive()) {
                    byId.put(r.id, new CompiledRule(r));
                }
            } catch (RuleException e) {
                refused.merge(e.reason(), 1, Integer::sum);
                refusedRules.add(e.ruleId() + ": " + where + e.getMessage());
                LOG.warning(where + e.getMessage());
            }
            return this;
        }

        public RuleSet build() {
            return new RuleSet(new LinkedHashMap<>(byId), refused, refusedRules);
        }
    }

    /** Records refused, by reason. */
    public Map<String, Integer> refused() {
        return refused;
    }

    /** "id: message" of each refused record, in order. */
    public List<String> refusedRules() {
        return refusedRules;
    }

    public int size() {
        return byId.size();
    }

    public boolean contains(String ruleId) {
        return byId.containsKey(ruleId);
    }

    /** The active rules, in the order they are tried. */
    public List<Rule> rules() {
        List<Rule> out = new ArrayList<>();
        for (CompiledRule c : byId.values()) {
            out.add(c.rule);
        }
        out.sort(RULE_ORDER);
        return out;
    }

    static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    // ------------------------------------------------------------ applying

    /** The decision: the rewrite rule that decided (null: none) and the key. */
    private static final class Decision {
        final CompiledRule rule;
        final String key;

        Decision(CompiledRule rule, String key) {
            this.rule = rule;
            this.key = key;
        }
    }

    /** The first of {@code rules} that rewrites {@code url} (tried as given, then lightly normalized). */
    private static Decision decide(String url, List<CompiledRule> rules) {
        for (CompiledRule cr : rules) {
            String out = cr.apply(url);
            if (out != null) {
                return new Decision(cr, Urls.lightNormalize(out));
            }
        }
        String norm = Urls.lightNormalize(url);
        if (!norm.equals(url) && !rules.isEmpty()) {
            for (CompiledRule cr : rules) {
                String out = cr.apply(norm);
                if (out != null) {
                    return new Decision(cr, Urls.lightNormalize(out));
                }
            }
        }
        return new Decision(null, norm);
    }

    /** Are the host's URLs normalized before rewrite rules apply? */
    private boolean isPre(String host) {
        return !every.isEmpty() || pre.contains(host);
    }

    /** The host's parameter rules, then the every-host ones it is not excepted from. */
    private Map<String, Rule> dropsOf(String host) {
        Map<String, Rule> own = drops.get(host);
        if (every.isEmpty()) {
            return own;
        }
        Map<String, Rule> out = own == null ? new LinkedHashMap<>() : new LinkedHashMap<>(own);
        for (Map.Entry<String, Rule> e : every.entrySet()) {
            if (!excepted.get(e.getKey()).contains(host)) {
                out.putIfAbsent(e.getKey(), e.getValue());
            }
        }
        return out;
    }

    private List<CompiledRule> rulesOf(String host) {
        return byHost.getOrDefault(host, List.of());
    }

    /** The canonical key of {@code url}: the same string Python's RuleSet gives. */
    public String canonicalize(String url) {
        String host = Urls.hostOf(url);
        if (pre.isEmpty() && every.isEmpty()) {
            return decide(url, rulesOf(host)).key;
        }
        Rule move = moves.get(host);
        if (move != null) { // the URL is read on the canonical host, and is given as that
            host = move.canonicalHost;
            url = HostRules.toHost(url, host);
        }
        List<CompiledRule> rules = rulesOf(host);
        if (!isPre(host)) { // a host without parameter, scheme or path-edit rules
            Decision d = decide(url, rules);
            return d.rule == null ? d.key : after(d.key); // only a rewrite moves a URL to another host
        }
        String u = https.containsKey(host) ? Params.toHttps(url) : url;
        Map<String, Rule> dropped = dropsOf(host);
        if (dropped != null) {
            u = Params.dropParams(u, dropped.keySet());
        }
        Map<String, Rule> edited = edits.get(host);
        if (edited != null) {
            u = PathEdits.apply(u, edited.keySet());
        }
        Decision d = decide(u, rules);
        if (d.rule != null) {
            return after(d.key);
        }
        return u.equals(url) ? d.key : explainOn(url, host).key; // on this host: not moved again
    }

    /** The key with its own host's host, scheme, parameter and path-edit rules applied: a rewrite rule
     * may move a URL to another host, whose rules then hold. */
    private String after(String key) {
        String host = Urls.hostOf(key);
        if (!isPre(host)) {
            return key;
        }
        Rule move = moves.get(host);
        if (move != null) {
            host = move.canonicalHost;
            return Urls.lightNormalize(prepare(HostRules.toHost(key, host), host).url);
        }
        Prepared p = prepare(key, host);
        return p.first == null ? key : Urls.lightNormalize(p.url);
    }

    private static final class Prepared {
        final String url;
        final Rule first;

        Prepared(String url, Rule first) {
            this.url = url;
            this.first = first;
        }
    }

    /** {@code url} with its host's scheme, parameter and path-edit rules applied, and the first
     * that changed it (of the edits, the first in the order they apply). */
    private Prepared prepare(String url, String host) {
        Rule first = null;
        Rule scheme = https.get(host);
        if (scheme != null) {
            String out = Params.toHttps(url);
            if (!out.equals(url)) {
                first = scheme;
                url = out;
            }
        }
        Map<String, Rule> dropped = dropsOf(host);
        if (dropped != null) {
            String out = Params.dropParams(url, dropped.keySet());
            if (!out.equals(url)) {
                if (first == null) {
                    Set<String> names = Params.queryNames(url);
                    for (Map.Entry<String, Rule> e : dropped.entrySet()) {
                        if (names.contains(e.getKey())) {
                            first = e.getValue();
                            break;
                        }
                    }
                }
                url = out;
            }
        }
        Map<String, Rule> edited = edits.get(host);
        if (edited != null) {
            String out = PathEdits.apply(url, edited.keySet());
            if (!out.equals(url)) {
                if (first == null) {
                    first = edited.get(PathEdits.applied(url, edited.keySet()).get(0));
                }
                url = out;
            }
        }
        return new Prepared(url, first);
    }

    /** What decides a URL: the rule (null when only light normalization applies) and the key. */
    public static final class Explanation {
        public final Rule rule;
        public final String key;

        Explanation(Rule rule, String key) {
            this.rule = rule;
            this.key = key;
        }
    }

    /** The rule that decides {@code url} and the key (Python's {@code RuleSet.explain}): the
     * rewrite rule, or else the first scheme, parameter or path-edit rule that changed the URL,
     * or else the host rule that moved it to another host. */
    public Explanation explain(String url) {
        String host = Urls.hostOf(url);
        Rule move = moves.get(host);
        if (move == null) {
            return explainOn(url, host);
        }
        host = move.canonicalHost;
        Explanation e = explainOn(HostRules.toHost(url, host), host);
        return e.rule == null ? new Explanation(move, e.key) : e;
    }

    /** explain for {@code url} as given on {@code host}, its host rule (if any) applied already. */
    private Explanation explainOn(String url, String host) {
        List<CompiledRule> rules = rulesOf(host);
        if (!isPre(host)) {
            Decision d = decide(url, rules);
            if (d.rule == null) {
                return new Explanation(null, d.key);
            }
            return new Explanation(d.rule.rule, pre.isEmpty() && every.isEmpty() ? d.key : after(d.key));
        }
        Prepared stripped = prepare(url, host);
        Decision d = decide(stripped.url, rules);
        if (d.rule == null && stripped.first != null) {
            Decision raw = decide(url, rules);
            if (raw.rule != null) {
                return new Explanation(raw.rule.rule, after(Urls.lightNormalize(prepare(raw.key, host).url)));
            }
            return new Explanation(stripped.first, d.key);
        }
        return d.rule == null ? new Explanation(null, d.key) : new Explanation(d.rule.rule, after(d.key));
    }

    /**
     * The rules that apply to {@code url} (Python's {@code RuleSet.applicable}): its host rule,
     * then its (canonical) host's scheme rule if it changes the URL, the parameter rules that
     * drop something, the path-edit rules that change what they leave (in the order they
     * apply), then the rewrite rules whose context matches the result (or, when none does,
     * the URL as given).
     */
    public List<Rule> applicable(String url) {
        String host = Urls.hostOf(url);
        Rule move = moves.get(host);
        if (move == null) {
            return applicableOn(url, host);
        }
        host = move.canonicalHost;
        List<Rule> out = new ArrayList<>();
        out.add(move);
        out.addAll(applicableOn(HostRules.toHost(url, host), host));
        return out;
    }

    private List<Rule> applicableOn(String url, String host) {
        Map<String, Rule> dropped = dropsOf(host);
        if (dropped == null) {
            dropped = Map.of();
        }
        Set<String> names = Params.queryNames(url);
        List<CompiledRule> rules = rulesOf(host);
        String stripped = prepare(url, host).url;
        List<Rule> out = matching(rules, stripped);
        if (out.isEmpty() && !stripped.equals(url)) {
            out = matching(rules, url);
        }
        List<Rule> pre = new ArrayList<>();
        Rule scheme = https.get(host);
        if (scheme != null && !Params.toHttps(url).equals(url)) {
            pre.add(scheme);
        }
        for (Map.Entry<String, Rule> e : dropped.entrySet()) {
            if (names.contains(e.getKey())) {
                pre.add(e.getValue());
            }
        }
        Map<String, Rule> edited = edits.getOrDefault(host, Map.of());
        String left = dropped.isEmpty() ? url : Params.dropParams(url, dropped.keySet());
        for (String e : PathEdits.applied(left, edited.keySet())) {
            pre.add(edited.get(e));
        }
        pre.addAll(out);
        return pre;
    }

    private static List<Rule> matching(List<CompiledRule> rules, String url) {
        List<Rule> out = new ArrayList<>();
        for (CompiledRule cr : rules) {
            if (cr.apply(url) != null) {
                out.add(cr.rule);
            }
        }
        return out;
    }
}
