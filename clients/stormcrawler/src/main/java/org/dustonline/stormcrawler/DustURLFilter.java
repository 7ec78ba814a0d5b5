package org.dustonline.stormcrawler;

import com.digitalpebble.stormcrawler.Metadata;
import com.digitalpebble.stormcrawler.filtering.URLFilter;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.logging.Logger;
import org.dustonline.rules.RuleSet;
import org.dustonline.rules.RuleSubscriber;

/**
 * A StormCrawler URL filter that rewrites each URL (outlinks, redirects, sitemap links) to
 * its dustonline key, so the status index holds one URL per page and duplicates are never
 * fetched. The key is {@link RuleSet#canonicalize(String)}'s, which is Python's
 * {@code RuleSet.canonicalize}'s (the conformance suite). It never drops a URL.
 *
 * <p>Configured in urlfilters.json like any StormCrawler filter (docs/crawlers.md):
 *
 * <pre>{"class": "org.dustonline.stormcrawler.DustURLFilter", "name": "DustURLFilter",
 *  "params": {"rulesFile": "/path/rules.jsonl"}}</pre>
 *
 * or with {@code "bootstrap"} and {@code "topic"} to follow the rules topic (a
 * {@link RuleSubscriber}; {@code "waitSeconds"}, default 30, for it to be current before the
 * first URL). A param missing is read from the topology's config: {@code dustonline.rules.file},
 * {@code dustonline.kafka.bootstrap}, {@code dustonline.rules.topic}.
 */
public class DustURLFilter implements URLFilter {
    private static final Logger LOG = Logger.getLogger("org.dustonline.stormcrawler");

    private UnaryOperator<String> keys = UnaryOperator.identity();
    private RuleSubscriber subscriber;

    @Override
    public void configure(Map<String, Object> stormConf, JsonNode params) {
        String file = setting(params, "rulesFile", stormConf, "dustonline.rules.file");
        String bootstrap = setting(params, "bootstrap", stormConf, "dustonline.kafka.bootstrap");
        String topic = setting(params, "topic", stormConf, "dustonline.rules.topic");
        try {
            RuleSet snapshot = file == null ? null : RuleSet.load(Path.of(file));
            if (bootstrap != null) {
                // the topic keeps the set current; a rules file, if given, is where it starts
                subscriber = new RuleSubscriber(RuleSubscriber.consumerProps(bootstrap),
                        topic == null ? "dust.rules" : topic, snapshot == null ? RuleSet.of(List.of()) : snapshot)
                        .start();
                String wait = setting(params, "waitSeconds", stormConf, "dustonline.rules.wait.seconds");
                if (!subscriber.waitUntilCurrent(wait == null ? 30 : Long.parseLong(wait), TimeUnit.SECONDS)) {
                    LOG.warning("dustonline: the rules topic is not read up to its end yet; URLs keep going");
                }
                keys = subscriber::canonicalize;
            } else if (snapshot != null) {
                keys = snapshot::canonicalize;
                if (!snapshot.refused().isEmpty()) {
                    LOG.warning("dustonline: rules refused in " + file + ": " + snapshot.refused());
                }
            } else {
                throw new IllegalArgumentException(
                        "DustURLFilter needs params.rulesFile (or dustonline.rules.file) or params.bootstrap");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("DustURLFilter: cannot read " + file, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("DustURLFilter: interrupted while reading the rules topic", e);
        }
    }

    @Override
    public String filter(URL sourceUrl, Metadata sourceMetadata, String urlToFilter) {
        return keys.apply(urlToFilter);
    }

    /** Stops the subscriber, if there is one (StormCrawler does not call this; tests do). */
    public void close() throws InterruptedException {
        if (subscriber != null) {
            subscriber.close();
        }
    }

    private static String setting(JsonNode params, String name, Map<String, Object> conf, String confName) {
        JsonNode v = params == null ? null : params.get(name);
        if (v != null && !v.isNull()) {
            return v.asText();
        }
        Object c = conf == null ? null : conf.get(confName);
        return c == null ? null : c.toString();
    }
}
