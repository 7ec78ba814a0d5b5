package org.dustonline.rules;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Parameter and scheme rules' operations (dustonline/rules/params.py): the query is the
 * text after the first '?' up to the first '#', split on '&'; a part is removed when its
 * name (the text before its first '=', or the whole part) equals a dropped name, byte for
 * byte; a query left empty loses its '?'.
 */
public final class Params {
    private Params() {}

    /** [index of '?', end of the query], or null (path edits' empty query too). */
    static int[] query(String url) {
        int q = url.indexOf('?');
        if (q < 0) {
            return null;
        }
        int end = url.indexOf('#', q);
        return new int[] {q, end < 0 ? url.length() : end};
    }

    /** A query part's name: the text before its first '=', or the whole part. */
    static String name(String part) {
        int eq = part.indexOf('=');
        return eq < 0 ? part : part.substring(0, eq);
    }

    /** The names of the query's parts, in order (none for no query or an empty one). */
    public static Set<String> queryNames(String url) {
        int[] span = query(url);
        Set<String> out = new LinkedHashSet<>();
        if (span == null || span[1] == span[0] + 1) {
            return out;
        }
        for (String part : url.substring(span[0] + 1, span[1]).split("&", -1)) {
            out.add(name(part));
        }
        return out;
    }

    public static String dropParams(String url, Collection<String> names) {
        return names.isEmpty() ? url : removeParts(url, p -> names.contains(name(p)));
    }

    /** {@code url} without the query parts {@code removed} says go (the query split on '&',
     * the others kept in order and unchanged), and without its '?' when none is left: the
     * parameter rules and the bare-tokens edit (PathEdits). */
    static String removeParts(String url, Predicate<String> removed) {
        int[] span = query(url);
        if (span == null) {
            return url;
        }
        String[] parts = url.substring(span[0] + 1, span[1]).split("&", -1);
        List<String> kept = new ArrayList<>(parts.length);
        for (String p : parts) {
            if (!removed.test(p)) {
                kept.add(p);
            }
        }
        if (kept.size() == parts.length) {
            return url;
        }
        return url.substring(0, span[0]) + (kept.isEmpty() ? "" : "?" + String.join("&", kept))
                + url.substring(span[1]);
    }

    /** {@code url} with an http scheme (any letter case) read as https. */
    public static String toHttps(String url) {
        if (url.length() >= 7 && url.regionMatches(true, 0, "http://", 0, 7) && isAscii(url, 7)) {
            return "https://" + url.substring(7);
        }
        return url;
    }

    private static boolean isAscii(String s, int n) {
        for (int i = 0; i < n; i++) {
            if (s.charAt(i) > 127) {
                return false;
            }
        }
        return true;
    }
}
