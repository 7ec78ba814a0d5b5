package org.dustonline.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * clients/conformance/cases.jsonl, the suite every client must pass: each set's rule
 * records are written to a rules file and loaded as a crawler loads one, and every URL
 * must give the key Python's RuleSet gave, every refusal the reason it gave, and where a
 * case names it ({@code decides}), the rule Python's explain gave. One test per case, so the
 * report lists them ("conformance[set] url").
 */
class ConformanceTest {
    static final Path CASES = Path.of(System.getProperty("conformance.cases", "../conformance/cases.jsonl"));

    static final class CaseSet {
        final List<String> rules = new ArrayList<>();
        final Map<String, Integer> refused = new TreeMap<>();
        final List<String[]> cases = new ArrayList<>();
    }

    static Map<String, CaseSet> read() throws IOException {
        ObjectMapper json = new ObjectMapper();
        Map<String, CaseSet> sets = new LinkedHashMap<>();
        for (String line : Files.readAllLines(CASES, StandardCharsets.UTF_8)) {
            JsonNode rec = json.readTree(line);
            if (!rec.has("set")) {
                continue;
            }
            CaseSet s = sets.computeIfAbsent(rec.get("set").textValue(), k -> new CaseSet());
            if (rec.has("rule")) {
                s.rules.add(json.writeValueAsString(rec.get("rule")));
            } else if (rec.has("refused")) {
                rec.get("refused").fields().forEachRemaining(e -> s.refused.put(e.getKey(), e.getValue().intValue()));
            } else if (rec.has("url")) {
                // decides: absent (not asked), JSON null (no rule) or the rule's id
                JsonNode decides = rec.get("decides");
                s.cases.add(new String[] {rec.get("url").textValue(), rec.get("key").textValue(),
                    decides == null ? null : decides.isNull() ? "" : decides.textValue()});
            }
        }
        return sets;
    }

    @TestFactory
    Stream<DynamicNode> conformance() throws IOException {
        Map<String, CaseSet> sets = read();
        assertTrue(sets.size() >= 10, "sets in " + CASES);
        assertTrue(sets.values().stream().mapToInt(s -> s.cases.size()).sum() >= 400, "cases in " + CASES);
        Path dir = Files.createTempDirectory("conformance");
        List<DynamicNode> out = new ArrayList<>();
        for (Map.Entry<String, CaseSet> e : sets.entrySet()) {
            String name = e.getKey();
            CaseSet s = e.getValue();
            Path file = dir.resolve(name + ".jsonl");
            Files.write(file, s.rules, StandardCharsets.UTF_8);
            RuleSet rs = RuleSet.load(file);
            List<DynamicNode> tests = new ArrayList<>();
            tests.add(DynamicTest.dynamicTest("conformance[" + name + "] refused",
                    () -> assertEquals(s.refused, new TreeMap<>(rs.refused()), String.join("\n", rs.refusedRules()))));
            for (String[] c : s.cases) {
                tests.add(DynamicTest.dynamicTest("conformance[" + name + "] " + printable(c[0]), () -> {
                    String where = "set " + name + ", URL " + printable(c[0]);
                    assertEquals(c[1], rs.canonicalize(c[0]), where);
                    if (c[2] != null) {
                        RuleSet.Explanation x = rs.explain(c[0]);
                        assertEquals(c[1], x.key, where + ": explain's key");
                        assertEquals(c[2], x.rule == null ? "" : x.rule.id, where + ": the deciding rule");
                    }
                }));
            }
            out.add(DynamicContainer.dynamicContainer(name, tests));
        }
        return out.stream();
    }

    /** A URL as a test name: control characters and lone surrogates escaped. */
    static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean lone = Character.isSurrogate(c)
                    && !(Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1)))
                    && !(Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(s.charAt(i - 1)));
            if (c < 0x20 || c == 0x7f || lone || c == 0x85 || c == 0x2028 || c == 0x2029) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
