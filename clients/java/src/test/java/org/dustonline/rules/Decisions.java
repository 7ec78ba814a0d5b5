package org.dustonline.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Cases of {url, key, deciding rule id or null} checked through canonicalize and explain. */
final class Decisions {
    private Decisions() {}

    static void check(RuleSet rs, String[][] cases) {
        for (String[] c : cases) {
            assertEquals(c[1], rs.canonicalize(c[0]), c[0]);
            RuleSet.Explanation e = rs.explain(c[0]);
            assertEquals(c[1], e.key, c[0]);
            assertEquals(c[2], e.rule == null ? null : e.rule.id, c[0]);
            assertEquals(c[1], rs.canonicalize(c[1]), "keys are fixed points");
        }
    }
}
