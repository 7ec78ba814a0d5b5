package org.dustonline.stormcrawler;

import static org.dustonline.rules.testing.ConformanceCases.printable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.digitalpebble.stormcrawler.Metadata;
import com.digitalpebble.stormcrawler.filtering.URLFilters;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.dustonline.rules.testing.ConformanceCases;
import org.dustonline.rules.testing.ConformanceCases.CaseSet;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * DustURLFilter built as StormCrawler builds it: {@link URLFilters} reads urlfilters JSON
 * from the classpath (dust-urlfilters.json, as a topology's urlfilters.json), instantiates
 * the class and calls {@code configure(stormConf, params)}; the rules file comes from the
 * topology config ({@code dustonline.rules.file}). Every URL of the conformance suite
 * (clients/conformance/cases.jsonl) must come out as the key Python's RuleSet gave. One test
 * per case ("stormcrawler[set] url"), so the report lists them.
 */
class DustURLFilterTest {
    @TempDir
    static Path tmp; // JUnit deletes it after the class: nothing is left in the system temp dir

    static final ObjectMapper JSON = new ObjectMapper();

    @TestFactory
    Stream<DynamicNode> stormcrawler() throws Exception {
        Map<String, CaseSet> sets = ConformanceCases.read();
        assertTrue(ConformanceCases.size(sets) >= 400, "cases in " + ConformanceCases.FILE);
        Path dir = Files.createTempDirectory(tmp, "dust-stormcrawler");
        URL source = new URL("http://example.com/");
        List<DynamicNode> out = new ArrayList<>();
        for (Map.Entry<String, CaseSet> e : sets.entrySet()) {
            String set = e.getKey();
            Path file = e.getValue().write(dir, set);
            Map<String, Object> conf = new HashMap<>();
            conf.put("urlfilters.config.file", "dust-urlfilters.json");
            conf.put("dustonline.rules.file", file.toString());
            URLFilters filters = URLFilters.fromConf(conf);
            List<DynamicNode> tests = new ArrayList<>();
            for (String[] c : e.getValue().cases) {
                tests.add(DynamicTest.dynamicTest("stormcrawler[" + set + "] " + printable(c[0]),
                        () -> assertEquals(c[1], filters.filter(source, new Metadata(), c[0]), "set " + set)));
            }
            out.add(DynamicContainer.dynamicContainer(set, tests));
        }
        return out.stream();
    }

    @Test
    void paramsOfItsOwnAndNoRulesSaySo() throws Exception {
        Path file = Files.createTempFile(tmp, "rules", ".jsonl");
        Files.writeString(file, "{\"id\":\"r\",\"hosts\":[\"a.com\",\"www.a.com\"],"
                + "\"context\":\"^http\\\\:\\\\/\\\\/(?:www\\\\.)?a\\\\.com\\\\/(.*)$\","
                + "\"transformation\":\"http://a.com/$1\",\"support\":3}\n");
        DustURLFilter f = new DustURLFilter();
        ObjectNode params = JSON.createObjectNode();
        params.put("rulesFile", file.toString());
        f.configure(new HashMap<>(), params);
        assertEquals("http://a.com/x", f.filter(null, null, "http://WWW.A.COM/x#top"));
        assertEquals("http://b.com/Y", f.filter(null, null, "HTTP://B.com:80/Y"));
        assertThrows(IllegalArgumentException.class,
                () -> new DustURLFilter().configure(new HashMap<>(), JSON.createObjectNode()));
    }
}
