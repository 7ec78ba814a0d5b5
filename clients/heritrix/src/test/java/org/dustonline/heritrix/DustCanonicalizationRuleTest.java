package org.dustonline.heritrix;

import static org.dustonline.rules.testing.ConformanceCases.printable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.archive.crawler.prefetch.FrontierPreparer;
import org.archive.crawler.spring.SheetOverlaysManager;
import org.archive.modules.CrawlURI;
import org.archive.modules.canonicalize.UriCanonicalizationPolicy;
import org.archive.net.UURI;
import org.archive.net.UURIFactory;
import org.archive.spring.KeyedProperties;
import org.dustonline.rules.RuleSet;
import org.dustonline.rules.testing.ConformanceCases;
import org.dustonline.rules.testing.ConformanceCases.CaseSet;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.support.GenericXmlApplicationContext;
import org.springframework.core.io.ByteArrayResource;

/**
 * DustCanonicalizationRule on the conformance suite (clients/conformance/cases.jsonl): every
 * URL comes out as the key Python's RuleSet gave, one test per case ("heritrix[set] url"),
 * so the report lists them. Then as a crawl uses it: declared in a crawler-beans fragment
 * loaded by Spring, the policy autowired into a FrontierPreparer, and every URI of the suite
 * that UURIFactory accepts keyed by {@code FrontierPreparer.prepare}, the already-seen key.
 */
class DustCanonicalizationRuleTest {
    @TempDir
    static Path tmp; // JUnit deletes it after the class: nothing is left in the system temp dir

    static Map<String, CaseSet> cached; // both tests read the suite: once

    static synchronized Map<String, CaseSet> read() throws IOException {
        if (cached == null) {
            cached = ConformanceCases.read();
        }
        return cached;
    }

    @TestFactory
    Stream<DynamicNode> heritrix() throws Exception {
        Map<String, CaseSet> sets = read();
        assertTrue(ConformanceCases.size(sets) >= 400, "cases in " + ConformanceCases.FILE);
        Path dir = Files.createTempDirectory(tmp, "dust-heritrix");
        List<DynamicNode> out = new ArrayList<>();
        for (Map.Entry<String, CaseSet> e : sets.entrySet()) {
            String set = e.getKey();
            DustCanonicalizationRule rule = new DustCanonicalizationRule();
            rule.setRulesFile(e.getValue().write(dir, set).toString());
            List<DynamicNode> tests = new ArrayList<>();
            for (String[] c : e.getValue().cases) {
                tests.add(DynamicTest.dynamicTest("heritrix[" + set + "] " + printable(c[0]),
                        () -> assertEquals(c[1], rule.canonicalize(c[0]), "set " + set)));
            }
            out.add(DynamicContainer.dynamicContainer(set, tests));
        }
        return out.stream();
    }

    static final String HEAD = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<beans xmlns=\"http://www.springframework.org/schema/beans\"\n"
            + "  xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n"
            + "  xmlns:context=\"http://www.springframework.org/schema/context\"\n"
            + "  xsi:schemaLocation=\"http://www.springframework.org/schema/beans"
            + " http://www.springframework.org/schema/beans/spring-beans.xsd"
            + " http://www.springframework.org/schema/context"
            + " http://www.springframework.org/schema/context/spring-context.xsd\">\n"
            + "<context:annotation-config/>\n"
            + "<bean id=\"sheetOverlaysManager\" autowire=\"byType\""
            + " class=\"org.archive.crawler.spring.SheetOverlaysManager\"/>\n";

    /** The policy bean of docs/crawlers.md, with the rule at the head of its list. */
    static String beans(Path file) {
        return HEAD
                + "<bean id=\"canonicalizationPolicy\" class=\"org.archive.modules.canonicalize.RulesCanonicalizationPolicy\">\n"
                + " <property name=\"rules\"><list>\n"
                + "  <bean class=\"org.dustonline.heritrix.DustCanonicalizationRule\">\n"
                + "   <property name=\"rulesFile\" value=\"" + file + "\"/>\n"
                + "  </bean>\n"
                + " </list></property>\n"
                + "</bean>\n</beans>\n";
    }

    @Test
    void keysUrisAsACrawlDoes() throws Exception {
        Logger.getLogger("").setLevel(Level.WARNING);
        Path dir = Files.createTempDirectory(tmp, "dust-heritrix-crawl");
        int keyed = 0;
        int rewritten = 0;
        for (Map.Entry<String, CaseSet> entry : read().entrySet()) {
            String set = entry.getKey();
            Path file = entry.getValue().write(dir, set);
            RuleSet expected = RuleSet.load(file);
            GenericXmlApplicationContext ctx = new GenericXmlApplicationContext();
            ctx.load(new ByteArrayResource(beans(file).getBytes(StandardCharsets.UTF_8)));
            ctx.refresh();
            ctx.start(); // as a job's launch starts its Lifecycle beans
            try {
                FrontierPreparer preparer = new FrontierPreparer();
                preparer.setCanonicalizationPolicy(ctx.getBean(UriCanonicalizationPolicy.class));
                SheetOverlaysManager sheets = ctx.getBean("sheetOverlaysManager", SheetOverlaysManager.class);
                for (String[] c : entry.getValue().cases) {
                    UURI uuri;
                    try {
                        uuri = UURIFactory.getInstance(c[0]);
                    } catch (Exception e) {
                        continue; // Heritrix never crawls it
                    }
                    CrawlURI curi = new CrawlURI(uuri);
                    sheets.applyOverlaysTo(curi);
                    KeyedProperties.loadOverridesFrom(curi);
                    try {
                        preparer.prepare(curi);
                    } finally {
                        KeyedProperties.clearOverridesFrom(curi);
                    }
                    String key = expected.canonicalize(curi.getURI());
                    assertEquals(key, curi.getCanonicalString(), set + ": " + c[0]);
                    keyed++;
                    rewritten += key.equals(curi.getURI()) ? 0 : 1;
                }
            } finally {
                ctx.close();
            }
        }
        assertTrue(keyed >= 300 && rewritten >= 150, keyed + " keyed, " + rewritten + " rewritten");
    }

    @Test
    void aBadConfigSaysWhatToFix() throws Exception {
        IllegalStateException none = assertThrows(IllegalStateException.class,
                () -> new DustCanonicalizationRule().canonicalize("http://a.com/"));
        assertTrue(none.getMessage().contains("rulesFile"), none.getMessage());
        DustCanonicalizationRule missing = new DustCanonicalizationRule();
        missing.setRulesFile("/nonexistent/rules.jsonl");
        IllegalStateException e = assertThrows(IllegalStateException.class, missing::start);
        assertTrue(e.getMessage().contains("/nonexistent/rules.jsonl"), e.getMessage());
        Path file = Files.createTempFile(tmp, "rules", ".jsonl");
        Files.writeString(file, "{\"id\":\"r\",\"hosts\":[\"a.com\",\"www.a.com\"],"
                + "\"context\":\"^http\\\\:\\\\/\\\\/(?:www\\\\.)?a\\\\.com\\\\/(.*)$\","
                + "\"transformation\":\"http://a.com/$1\",\"support\":3}\n");
        DustCanonicalizationRule rule = new DustCanonicalizationRule();
        rule.setRulesFile(file.toString());
        rule.start();
        assertTrue(rule.isRunning());
        assertEquals("http://a.com/x", rule.canonicalize("http://WWW.A.COM/x#top"));
        rule.stop();
        assertTrue(!rule.isRunning());
    }
}
