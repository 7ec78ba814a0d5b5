package org.dustonline.rules;

import static org.dustonline.rules.testing.ConformanceCases.printable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.dustonline.rules.testing.ConformanceCases;
import org.dustonline.rules.testing.ConformanceCases.CaseSet;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * clients/conformance/cases.jsonl, the suite every client must pass: each set's rule
 * records are written to a rules file and loaded as a crawler loads one, and every URL
 * must give the key Python's RuleSet gave, every refusal the reason it gave, and where a
 * case names it ({@code decides}), the rule Python's explain gave. One test per case, so the
 * report lists them ("conformance[set] url").
 */
class ConformanceTest {
    @TempDir
    static Path tmp; // JUnit deletes it after the class: nothing is left in the system temp dir

    @TestFactory
    Stream<DynamicNode> conformance() throws IOException {
        Map<String, CaseSet> sets = ConformanceCases.read();
        assertTrue(sets.size() >= 10, "sets in " + ConformanceCases.FILE);
        assertTrue(ConformanceCases.size(sets) >= 400, "cases in " + ConformanceCases.FILE);
        Path dir = Files.createTempDirectory(tmp, "conformance");
        List<DynamicNode> out = new ArrayList<>();
        for (Map.Entry<String, CaseSet> e : sets.entrySet()) {
            String name = e.getKey();
            CaseSet s = e.getValue();
            RuleSet rs = RuleSet.load(s.write(dir, name));
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
}
