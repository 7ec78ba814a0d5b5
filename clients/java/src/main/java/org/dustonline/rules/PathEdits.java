package org.dustonline.rules;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;

/**
 * Path-edit rules ({@code normalize}, the port of Python's {@code params.apply_edits},
 * {@code applied_edits} and {@code check_edit}): one edit of the URL a site ignores, applied
 * on its hosts after the parameter rules and before rewrite rules, in one order (lowercase
 * path, lowercase query names, sorted query, bare tokens, empty query, last segments,
 * trailing slash) so that every
 * client gives one key. The
 * path is the text after the authority up to the first '?' or '#'; the query, as for
 * parameter rules, the text after the first '?' up to the first '#' after it.
 */
final class PathEdits {
    static final String TRAILING_SLASH = "trailing-slash";
    static final String EMPTY_QUERY = "empty-query";
    static final String LOWERCASE_PATH = "lowercase-path";
    static final String LOWERCASE_NAMES = "lowercase-query-names";
    static final String SORT_QUERY = "sort-query";
    static final String BARE_TOKENS = "bare-tokens";
    static final String LAST_SEGMENT = "last-segment:";

    private PathEdits() {}

    /** Is {@code edit} a path edit of the format: one of the six words, or a last-segment
     * literal that is not empty and has no '/', '?' or '#'. */
    static boolean check(String edit) {
        if (edit.equals(TRAILING_SLASH) || edit.equals(EMPTY_QUERY) || edit.equals(LOWERCASE_PATH)
                || edit.equals(LOWERCASE_NAMES) || edit.equals(SORT_QUERY) || edit.equals(BARE_TOKENS)) {
            return true;
        }
        String seg = edit.startsWith(LAST_SEGMENT) ? edit.substring(LAST_SEGMENT.length()) : "";
        return !seg.isEmpty() && seg.indexOf('/') < 0 && seg.indexOf('?') < 0 && seg.indexOf('#') < 0;
    }

    /** RuleException {@code bad-edit} unless the edit is one of the format and the record
     * has no context, transformation or parameter (Python's {@code _admit}). */
    static void admit(Rule rule) {
        if (!check(rule.normalize) || !rule.context.isEmpty() || !rule.transformation.isEmpty()
                || (rule.dropParam != null && !rule.dropParam.isEmpty())
                || (rule.canonicalScheme != null && !rule.canonicalScheme.isEmpty())) {
            throw new RuleException("rule " + rule.id + ": normalize '" + rule.normalize + "' is not a path edit",
                    "bad-edit", rule.id);
        }
    }

    /** RuleException {@code bad-edit} for a {@code subsumed_by} that names another edit than
     * sort-query or lowercase-path, or is on a record other than a rewrite rule (Python's
     * {@code _admit}). */
    static void admitSubsumed(Rule rule) {
        String sub = rule.subsumedBy;
        if (sub == null) {
            return;
        }
        if (!(sub.equals(SORT_QUERY) || sub.equals(LOWERCASE_PATH)) || rule.context.isEmpty()
                || nonEmpty(rule.canonicalScheme) || nonEmpty(rule.canonicalHost) || nonEmpty(rule.normalize)
                || nonEmpty(rule.dropParam)) {
            throw new RuleException("rule " + rule.id + ": subsumed_by '" + sub
                    + "' belongs to a rewrite rule and names sort-query or lowercase-path", "bad-edit", rule.id);
        }
    }

    private static boolean nonEmpty(String s) {
        return s != null && !s.isEmpty();
    }

    /** ASCII letters lowered, nothing else (Java's and Python's lower cases differ beyond ASCII). */
    static String lowerAscii(String s) {
        char[] cs = s.toCharArray();
        for (int i = 0; i < cs.length; i++) {
            if (cs[i] >= 'A' && cs[i] <= 'Z') {
                cs[i] = (char) (cs[i] + ('a' - 'A'));
            }
        }
        return new String(cs);
    }

    /** [start, end] of the path: from the end of the authority to the first '?' or '#'. */
    private static int[] pathSpan(String url) {
        int i = url.indexOf("://");
        int start = i < 0 ? 0 : i + 3;
        int end = url.length();
        for (char ch : new char[] {'?', '#'}) {
            int j = url.indexOf(ch, start);
            if (j >= 0 && j < end) {
                end = j;
            }
        }
        int j = url.indexOf('/', start);
        return new int[] {j < 0 || j >= end ? end : j, end};
    }

    /** One edit, once (Python's {@code _edit_once}). */
    private static String once(String url, String edit) {
        if (edit.equals(LOWERCASE_PATH)) {
            int[] p = pathSpan(url);
            return url.substring(0, p[0]) + lowerAscii(url.substring(p[0], p[1])) + url.substring(p[1]);
        }
        if (edit.equals(LOWERCASE_NAMES)) {
            return lowerNames(url);
        }
        if (edit.equals(SORT_QUERY)) {
            return sortQuery(url);
        }
        if (edit.equals(BARE_TOKENS)) {
            return Params.removeParts(url, PathEdits::isBareToken);
        }
        if (edit.equals(EMPTY_QUERY)) {
            int[] q = Params.query(url);
            if (q != null && q[1] == q[0] + 1) {
                return url.substring(0, q[0]) + url.substring(q[1]);
            }
            return url;
        }
        int[] p = pathSpan(url);
        String path = url.substring(p[0], p[1]);
        if (edit.equals(TRAILING_SLASH)) {
            if (path.length() > 1 && path.endsWith("/")) {
                int n = path.length();
                while (n > 0 && path.charAt(n - 1) == '/') {
                    n--;
                }
                path = n == 0 ? "/" : path.substring(0, n);
            }
        } else { // last-segment:<literal>, compared with its %-escapes as light normalization writes them
            int cut = path.lastIndexOf('/');
            String seg = cut >= 0 ? path.substring(cut + 1) : "";
            if (cut >= 0 && !seg.isEmpty()
                    && (seg.indexOf('%') < 0 ? seg : Urls.fixPercent(seg)).equals(edit.substring(LAST_SEGMENT.length()))) {
                path = path.substring(0, cut + 1);
            }
        }
        return url.substring(0, p[0]) + path + url.substring(p[1]);
    }

    /** The ASCII letters of each query part's name lowered (a name ending at its part's
     * first '='); values untouched. */
    private static String lowerNames(String url) {
        int[] q = Params.query(url);
        if (q == null) {
            return url;
        }
        List<String> parts = queryParts(url, q);
        for (int i = 0; i < parts.size(); i++) {
            String part = parts.get(i);
            String name = Params.name(part);
            parts.set(i, lowerAscii(name) + part.substring(name.length()));
        }
        return url.substring(0, q[0] + 1) + String.join("&", parts) + url.substring(q[1]);
    }

    /** A query part without '=' that holds an ASCII digit (Python's {@code is_bare_token}). */
    static boolean isBareToken(String part) {
        if (part.indexOf('=') >= 0) {
            return false;
        }
        for (int i = 0; i < part.length(); i++) {
            char c = part.charAt(i);
            if (c >= '0' && c <= '9') {
                return true;
            }
        }
        return false;
    }

    /** The query's parts in the code-point order of their names, a stable sort: parts of
     * one name keep their order (Python's {@code _sort_query}). */
    private static String sortQuery(String url) {
        int[] q = Params.query(url);
        if (q == null) {
            return url;
        }
        List<String> parts = queryParts(url, q);
        parts.sort((a, b) -> RuleSet.compareCodePoints(Params.name(a), Params.name(b))); // List.sort is stable
        return url.substring(0, q[0] + 1) + String.join("&", parts) + url.substring(q[1]);
    }

    /** The parts of the query at {@code q} (Params.query), split on '&' as parameter rules
     * split it, empty parts kept. */
    private static List<String> queryParts(String url, int[] q) {
        return new ArrayList<>(Arrays.asList(url.substring(q[0] + 1, q[1]).split("&", -1)));
    }

    /** The steps of {@link #apply}: the trailing slashes go before the last segment is
     * compared and again after it is removed (last segments by code point, as Python sorts
     * them). */
    private static List<String> order(Collection<String> edits) {
        List<String> segments = new ArrayList<>();
        for (String e : edits) {
            if (e.startsWith(LAST_SEGMENT)) {
                segments.add(e);
            }
        }
        segments.sort(RuleSet::compareCodePoints);
        List<String> out = new ArrayList<>();
        for (String e : List.of(LOWERCASE_PATH, LOWERCASE_NAMES, SORT_QUERY, BARE_TOKENS, EMPTY_QUERY)) {
            if (edits.contains(e)) {
                out.add(e);
            }
        }
        boolean slash = edits.contains(TRAILING_SLASH);
        if (slash) {
            out.add(TRAILING_SLASH);
        }
        out.addAll(segments);
        if (slash && !segments.isEmpty()) {
            out.add(TRAILING_SLASH);
        }
        return out;
    }

    /** {@code url} with {@code edits} applied in the format's order (Python's {@code apply_edits}). */
    static String apply(String url, Collection<String> edits) {
        for (String e : order(edits)) {
            url = once(url, e);
        }
        return url;
    }

    /** The edits that change {@code url}, each once, in the order {@link #apply} first
     * applies them: explain names the first one's rule. */
    static List<String> applied(String url, Collection<String> edits) {
        List<String> out = new ArrayList<>();
        for (String e : order(edits)) {
            String next = once(url, e);
            if (!next.equals(url)) {
                if (!out.contains(e)) {
                    out.add(e);
                }
                url = next;
            }
        }
        return out;
    }
}
