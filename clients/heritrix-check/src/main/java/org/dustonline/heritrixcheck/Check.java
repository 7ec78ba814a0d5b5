package org.dustonline.heritrixcheck;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.logging.Level;
import java.util.logging.Logger;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.archive.crawler.prefetch.FrontierPreparer;
import org.archive.crawler.spring.SheetOverlaysManager;
import org.archive.modules.CrawlURI;
import org.archive.modules.canonicalize.UriCanonicalizationPolicy;
import org.archive.net.UURI;
import org.archive.net.UURIFactory;
import org.archive.spring.KeyedProperties;
import org.springframework.context.support.GenericXmlApplicationContext;
import org.springframework.core.io.ByteArrayResource;

/**
 * Keys URLs the way a Heritrix 3 crawl with the exported fragment does.
 *
 * <p>The fragment is loaded by Spring inside a minimal crawler-beans context (annotation
 * config and the {@code sheetOverlaysManager} as the stock profile declares it); a
 * {@code FrontierPreparer} is given the policy bean as the crawl's autowiring does. Each URL becomes a {@code CrawlURI} of {@code UURIFactory}; the
 * manager gives it its Sheets ({@code applyOverlaysTo}), and with those overlays loaded
 * {@code FrontierPreparer.prepare} sets its canonical string, the already-seen key, as
 * {@code WorkQueueFrontier} does before its uniqueness check.
 *
 * <p>Arguments, in threes: a fragment, a file of JSON strings (one URL a line), the output
 * file (JSON lines: url, uuri, sheets, key, or error).
 */
public final class Check {
    private static final String HEAD =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
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

    private Check() {}

    public static void main(String[] args) throws Exception {
        Logger.getLogger("").setLevel(Level.WARNING);
        for (int i = 0; i + 2 < args.length; i += 3) {
            run(Path.of(args[i]), Path.of(args[i + 1]), Path.of(args[i + 2]));
        }
    }

    private static void run(Path fragment, Path urls, Path keys) throws Exception {
        String xml = HEAD + Files.readString(fragment, StandardCharsets.UTF_8) + "\n</beans>\n";
        GenericXmlApplicationContext ctx = new GenericXmlApplicationContext();
        ctx.load(new ByteArrayResource(xml.getBytes(StandardCharsets.UTF_8)));
        ctx.refresh();
        // the crawl's preparer autowires the one UriCanonicalizationPolicy bean by type; its
        // other dependencies (scope, logger module) play no part in prepare()
        FrontierPreparer preparer = new FrontierPreparer();
        preparer.setCanonicalizationPolicy(ctx.getBean(UriCanonicalizationPolicy.class));
        SheetOverlaysManager sheets = ctx.getBean("sheetOverlaysManager", SheetOverlaysManager.class);
        // escaped output: a URL may hold a lone surrogate, which UTF-8 cannot carry
        ObjectMapper json = new ObjectMapper(JsonFactory.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build());
        int n = 0;
        try (BufferedReader in = Files.newBufferedReader(urls, StandardCharsets.UTF_8);
             BufferedWriter out = Files.newBufferedWriter(keys, StandardCharsets.UTF_8)) {
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isBlank()) {
                    continue;
                }
                String url = json.readValue(line, String.class);
                ObjectNode rec = json.createObjectNode();
                rec.put("url", url);
                try {
                    UURI uuri = UURIFactory.getInstance(url);
                    CrawlURI curi = new CrawlURI(uuri);
                    sheets.applyOverlaysTo(curi);
                    ArrayNode names = rec.putArray("sheets");
                    for (String name : new ArrayList<>(curi.getOverlayNames())) {
                        names.add(name);
                    }
                    rec.put("uuri", curi.getURI());
                    KeyedProperties.loadOverridesFrom(curi);
                    try {
                        preparer.prepare(curi);
                    } finally {
                        KeyedProperties.clearOverridesFrom(curi);
                    }
                    rec.put("key", curi.getCanonicalString());
                } catch (Exception e) {
                    rec.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                out.write(json.writeValueAsString(rec));
                out.write("\n");
                n++;
            }
        }
        ctx.close();
        System.out.println(fragment.getFileName() + ": keyed " + n + " URLs");
    }
}
