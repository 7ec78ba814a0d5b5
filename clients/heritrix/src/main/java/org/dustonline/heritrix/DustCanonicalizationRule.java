package org.dustonline.heritrix;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.archive.modules.canonicalize.BaseRule;
import org.dustonline.rules.RuleSet;
import org.dustonline.rules.RuleSubscriber;
import org.springframework.context.Lifecycle;

/**
 * A Heritrix 3 canonicalization rule that keys each URI with dustonline's rules: its output
 * is {@link RuleSet#canonicalize(String)}'s key, which is Python's {@code RuleSet.canonicalize}
 * key (the conformance suite). Unlike the Heritrix export (static RegexRule beans) it applies
 * every kind of rule, and it can follow the rules topic while the crawl runs.
 *
 * <p>In crawler-beans.cxml, at the head of the policy's list (docs/crawlers.md):
 *
 * <pre>{@code
 * <bean id="canonicalizationPolicy" class="org.archive.modules.canonicalize.RulesCanonicalizationPolicy">
 *  <property name="rules"><list>
 *   <bean class="org.dustonline.heritrix.DustCanonicalizationRule">
 *    <property name="rulesFile" value="/path/rules.jsonl"/>
 *   </bean>
 *  </list></property>
 * </bean>
 * }</pre>
 *
 * <p>With {@code bootstrap} (and {@code topic}, default {@code dust.rules}) it follows the
 * rules topic through a {@link RuleSubscriber}, starting from {@code rulesFile} when given,
 * and waits up to {@code waitSeconds} (default 30) at start for the topic to be read to its
 * end. A rules file that cannot be read, or neither property, fails the crawl's start with a
 * message that says which; a URL the rules cannot key is given back unchanged.
 */
public class DustCanonicalizationRule extends BaseRule implements Lifecycle {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = Logger.getLogger(DustCanonicalizationRule.class.getName());

    private String rulesFile;
    private String bootstrap;
    private String topic = "dust.rules";
    private long waitSeconds = 30;

    private transient volatile UnaryOperator<String> keys;
    private transient RuleSubscriber subscriber;
    private transient volatile boolean warned;

    public String getRulesFile() {
        return rulesFile;
    }

    /** A rules file, as {@code dustonline learn --rules-out} writes it. */
    public void setRulesFile(String rulesFile) {
        this.rulesFile = blank(rulesFile);
    }

    public String getBootstrap() {
        return bootstrap;
    }

    /** The Kafka bootstrap servers of the rules topic; unset: the rules file only. */
    public void setBootstrap(String bootstrap) {
        this.bootstrap = blank(bootstrap);
    }

    public String getTopic() {
        return topic;
    }

    public void setTopic(String topic) {
        this.topic = blank(topic) == null ? "dust.rules" : topic;
    }

    public long getWaitSeconds() {
        return waitSeconds;
    }

    public void setWaitSeconds(long waitSeconds) {
        this.waitSeconds = waitSeconds;
    }

    @Override
    public synchronized void start() {
        if (keys != null) {
            return;
        }
        if (rulesFile == null && bootstrap == null) {
            throw new IllegalStateException(
                    "DustCanonicalizationRule needs the property rulesFile (a rules file) or bootstrap (the rules topic's brokers)");
        }
        RuleSet snapshot;
        try {
            snapshot = rulesFile == null ? RuleSet.of(List.of()) : RuleSet.load(Path.of(rulesFile));
        } catch (IOException e) {
            throw new IllegalStateException("DustCanonicalizationRule: cannot read the rules file " + rulesFile + ": " + e, e);
        }
        if (!snapshot.refused().isEmpty()) {
            LOG.warning("dustonline: rules refused in " + rulesFile + ": " + snapshot.refused());
        }
        if (bootstrap == null) {
            keys = snapshot::canonicalize;
            return;
        }
        subscriber = new RuleSubscriber(RuleSubscriber.consumerProps(bootstrap), topic, snapshot).start();
        try {
            if (!subscriber.waitUntilCurrent(waitSeconds, TimeUnit.SECONDS)) {
                LOG.warning("dustonline: the rules topic " + topic + " is not read up to its end yet; URIs keep going");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        keys = subscriber::canonicalize;
    }

    @Override
    public synchronized void stop() {
        keys = null;
        if (subscriber != null) {
            try {
                subscriber.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            subscriber = null;
        }
    }

    @Override
    public boolean isRunning() {
        return keys != null;
    }

    /** The URI's dustonline key; started on first use when the container did not start it. */
    @Override
    public String canonicalize(String url) {
        UnaryOperator<String> k = keys;
        if (k == null) {
            start();
            k = keys;
        }
        try {
            return k.apply(url);
        } catch (RuntimeException e) { // no single URI may end the crawl
            if (!warned) {
                warned = true;
                LOG.log(Level.WARNING, "dustonline: a URI the rules could not key was left as it is: " + url, e);
            }
            return url;
        }
    }

    private static String blank(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
