package org.dustonline.rules;

import java.util.regex.Pattern;

/**
 * Host rules ({@code canonical_host}, the port of Python's {@code _admit_host_rule} and
 * {@code params.to_host}): what such a record may be, and what it does to a URL. A host
 * rule moves the URLs of its hosts to another host of their site before anything else
 * applies; a record from outside could otherwise send a crawler's URLs anywhere.
 */
final class HostRules {
    /** A lower-case DNS name of A-labels (clients/conformance/rule.schema.json). */
    private static final Pattern HOST_NAME =
            Pattern.compile("[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*");

    private HostRules() {}

    /**
     * RuleException {@code bad-host} unless the target is a lower-case host name and the
     * record has no context, transformation or other action; {@code foreign-host} unless
     * the target is on the site of every host of the rule and is none of them.
     */
    static void admit(Rule rule) {
        String target = rule.canonicalHost;
        if (target.length() > 253 || !HOST_NAME.matcher(target).matches()) {
            throw new RuleException("rule " + rule.id + ": canonical_host '" + target + "' is not a lower-case host name",
                    "bad-host", rule.id);
        }
        if (!rule.context.isEmpty() || !rule.transformation.isEmpty() || nonEmpty(rule.dropParam)
                || nonEmpty(rule.canonicalScheme) || nonEmpty(rule.normalize)) {
            throw new RuleException("rule " + rule.id + ": a host rule has no context, transformation or other action",
                    "bad-host", rule.id);
        }
        String site = Sites.siteOfHost(target);
        for (String h : rule.hosts) {
            String host = Urls.rstripDots(Urls.lower(h));
            if (host.equals(target) || !Sites.siteOfHost(host).equals(site)) {
                throw new RuleException("rule " + rule.id + ": canonical_host '" + target
                        + "' is not another host of the site of '" + host + "'", "foreign-host", rule.id);
            }
        }
    }

    private static boolean nonEmpty(String s) {
        return s != null && !s.isEmpty();
    }

    /** {@code url} on {@code host}: the host part of the authority replaced, userinfo and port kept. */
    static String toHost(String url, String host) {
        int i = url.indexOf("://");
        if (i < 0) {
            return url;
        }
        int start = i + 3;
        int end = url.length();
        for (char ch : new char[] {'/', '?', '#'}) {
            int j = url.indexOf(ch, start);
            if (j >= 0 && j < end) {
                end = j;
            }
        }
        String auth = url.substring(start, end);
        int at = auth.lastIndexOf('@');
        String head = auth.substring(0, at + 1);
        String hostport = auth.substring(at + 1);
        String port = "";
        if (!hostport.startsWith("[")) {
            int colon = hostport.indexOf(':');
            if (colon >= 0) {
                port = hostport.substring(colon);
            }
        }
        return url.substring(0, start) + head + host + port + url.substring(end);
    }
}
