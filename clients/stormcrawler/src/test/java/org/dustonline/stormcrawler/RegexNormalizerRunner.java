package org.dustonline.stormcrawler;

import com.digitalpebble.stormcrawler.filtering.regex.RegexURLNormalizer;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;

/**
 * Applies a {@code regex-normalize.xml} with StormCrawler's own RegexURLNormalizer (the
 * engine, from Maven Central; its rule loop is Nutch's: every rule in order as
 * {@code pattern.matcher(url).replaceAll(substitution)}), configured as StormCrawler's
 * URLFilters configures it: {@code {"regexNormalizerFile": NAME}}, NAME a resource on the
 * classpath. tests/test_export_nutch.py runs it and compares the outputs with Python's keys.
 *
 * <p>Arguments, one triple per rules file: the resource name, a file of JSON strings (one URL a
 * line), the output file (one JSON string a line, {@code null} where the filter drops the URL).
 */
public final class RegexNormalizerRunner {
    private RegexNormalizerRunner() {}

    public static void main(String[] args) throws Exception {
        // non-ASCII escaped in the JSON: a lone surrogate (the suite has some) has no UTF-8 form
        ObjectMapper json = JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();
        for (int i = 0; i + 2 < args.length; i += 3) {
            ObjectNode params = json.createObjectNode();
            params.put("regexNormalizerFile", args[i]);
            RegexURLNormalizer normalizer = new RegexURLNormalizer();
            normalizer.configure(new HashMap<>(), params);
            int n = 0;
            try (BufferedReader in = Files.newBufferedReader(Path.of(args[i + 1]), StandardCharsets.UTF_8);
                    BufferedWriter out = Files.newBufferedWriter(Path.of(args[i + 2]), StandardCharsets.UTF_8)) {
                String line;
                while ((line = in.readLine()) != null) {
                    String url = json.readValue(line, String.class);
                    out.write(json.writeValueAsString(normalizer.filter(null, null, url)));
                    out.write('\n');
                    n++;
                }
            }
            System.err.println(args[i] + ": " + n + " URLs");
        }
    }
}
