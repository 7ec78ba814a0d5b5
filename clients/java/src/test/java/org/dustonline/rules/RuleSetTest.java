package org.dustonline.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the conformance suite does not cover: reading records, and very long URLs. */
class RuleSetTest {
    static final String REWRITE = "{\"id\":\"r-1\",\"hosts\":[\"a.com\"],\"context\":\"^http\\\\:\\\\/\\\\/a\\\\.com((?:\\\\/[^/]*)*)$\","
            + "\"transformation\":\"http://a.com/k$1\",\"support\":3,\"fpr\":0.0,\"freq\":3,\"version\":1,"
            + "\"status\":\"active\",\"updated\":0.0}";

    @Test
    void aLineThatIsNotARuleRecordEndsTheLoadNamingFileAndLine(@TempDir Path dir) throws Exception {
        for (String bad : List.of("not json", "[]", "{\"id\":\"x\",\"hosts\":[\"a\"],\"context\":\"\"}",
                REWRITE.replace("\"support\":3", "\"support\":1.5"), REWRITE.replace("\"support\":3", "\"support\":1e2"),
                REWRITE.replace("[\"a.com\"]", "\"a.com\""), REWRITE.replace("\"fpr\":0.0", "\"fpr\":null"),
                REWRITE.replace("\"version\":1", "\"version\":1,\"format\":\"2\""))) {
            Path f = dir.resolve("rules.jsonl");
            Files.write(f, List.of(REWRITE, bad), StandardCharsets.UTF_8);
            RuleException e = assertThrows(RuleException.class, () -> RuleSet.load(f), bad);
            assertEquals("not-a-rule", e.reason());
            assertTrue(e.getMessage().startsWith(f + ":2: not a rule record"), e.getMessage());
        }
    }

    @Test
    void unknownFieldsAreIgnoredAndUnknownFormatsRefused(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("rules.jsonl");
        Files.write(f, List.of(REWRITE.replace("\"version\":1", "\"version\":1,\"later\":{\"x\":[1]}"), "",
                REWRITE.replace("r-1", "r-2").replace("\"version\":1", "\"version\":1,\"format\":2")),
                StandardCharsets.UTF_8);
        RuleSet rs = RuleSet.load(f);
        assertEquals(1, rs.size());
        assertEquals(Map.of("unknown-format", 1), rs.refused());
        assertTrue(rs.refusedRules().get(0).startsWith("r-2: " + f + ":3: rule r-2: record format 2"));
    }

    @Test
    void aLongUrlOfManySegmentsMatchesOnADeeperStack() {
        RuleSet rs = RuleSet.of(List.of(Rule.parse(REWRITE)));
        StringBuilder path = new StringBuilder();
        for (int i = 0; i < 200_000; i++) {
            path.append("/s").append(i % 10);
        }
        assertEquals("http://a.com/k" + path, rs.canonicalize("http://a.com" + path));
    }
}
