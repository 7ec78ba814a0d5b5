package org.dustonline.rules.testing;

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

/**
 * clients/conformance/cases.jsonl, the suite every client and crawler integration must pass,
 * read the same way by the tests of each (clients/java, clients/stormcrawler,
 * clients/heritrix compile this directory into their tests): per set, its rule records, the
 * refusals Python counted, and its cases.
 */
public final class ConformanceCases {
    /** The suite's file: {@code -Dconformance.cases}, as the Python tests pass it. */
    public static final Path FILE = Path.of(System.getProperty("conformance.cases", "../conformance/cases.jsonl"));

    private ConformanceCases() {}

    /** One set: rules loaded together, and the keys Python's RuleSet gave under them. */
    public static final class CaseSet {
        public final List<String> rules = new ArrayList<>();
        public final Map<String, Integer> refused = new TreeMap<>();
        /** url, key, and decides: null (not asked), "" (no rule) or the deciding rule's id. */
        public final List<String[]> cases = new ArrayList<>();

        /** The set's rule records as a rules file {@code dir/name.jsonl}, as a crawler loads one. */
        public Path write(Path dir, String name) throws IOException {
            Path file = dir.resolve(name + ".jsonl");
            Files.write(file, rules, StandardCharsets.UTF_8);
            return file;
        }
    }

    /** The sets in file order. */
    public static Map<String, CaseSet> read() throws IOException {
        ObjectMapper json = new ObjectMapper();
        Map<String, CaseSet> sets = new LinkedHashMap<>();
        for (String line : Files.readAllLines(FILE, StandardCharsets.UTF_8)) {
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
                JsonNode decides = rec.get("decides");
                s.cases.add(new String[] {rec.get("url").textValue(), rec.get("key").textValue(),
                    decides == null ? null : decides.isNull() ? "" : decides.textValue()});
            }
        }
        return sets;
    }

    /** Cases over all sets. */
    public static int size(Map<String, CaseSet> sets) {
        return sets.values().stream().mapToInt(s -> s.cases.size()).sum();
    }

    /**
     * A URL as a test name (the surefire report lists every case by it): control, format and
     * line-separator characters and lone surrogates escaped as {@code \\uXXXX}.
     */
    public static String printable(String s) {
        StringBuilder b = new StringBuilder();
        s.codePoints().forEach(cp -> {
            int type = Character.getType(cp);
            if (Character.isISOControl(cp) || type == Character.SURROGATE || type == Character.FORMAT
                    || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR) {
                b.append(String.format("\\u%04x", cp));
            } else {
                b.appendCodePoint(cp);
            }
        });
        return b.toString();
    }
}
