package org.dustonline.rules;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The site of a host, as Python's {@code dustonline.rules.urls.site_of_host} gives it:
 * the registered domain (public suffix + 1) by tldextract 5's algorithm over the public
 * suffix list snapshot tldextract bundles, its private section included. The snapshot is
 * copied byte for byte into this jar ({@code public_suffix_list.dat}, MPL 2.0; SitesTest
 * compares it with the installed tldextract's), so both readers refuse the same host rules
 * ({@code foreign-host}). IPs, single labels and hosts under no suffix are their own site.
 *
 * <p>Ported from tldextract 5.4 ({@code remote.lenient_netloc}, {@code
 * TLDExtract._extract_netloc}, {@code _PublicSuffixListTLDExtractor.suffix_index}): an
 * {@code xn--} label is read as its U-label when it is the canonical A-label of a label of
 * the list (idna 3's {@code decode} accepts only canonical A-labels, and every Unicode
 * label of the list decodes so), which is all the suffix lookup can see of it.
 */
public final class Sites {
    private static final String PRIVATE = "// ===BEGIN PRIVATE DOMAINS===";
    /** tldextract's PUBLIC_SUFFIX_RE, with Python's Unicode \w and \S, lines split at '\n' only. */
    private static final Pattern SUFFIX =
            Pattern.compile("^[.*!]*\\w\\S*", Pattern.MULTILINE | Pattern.UNIX_LINES | Pattern.UNICODE_CHARACTER_CLASS);
    private static final String SCHEME_CHARS =
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.";

    private Sites() {}

    /** A node of the reversed-label trie of suffixes. */
    private static final class Node {
        final Map<String, Node> matches = new HashMap<>();
        boolean end;
    }

    /** Loaded on first use: the trie and the A-label of each non-ASCII label of the list. */
    private static final class Psl {
        static final Node ROOT = new Node();
        static final Map<String, String> ULABEL = new HashMap<>();

        static {
            String text;
            try (InputStream in = Sites.class.getResourceAsStream("public_suffix_list.dat")) {
                if (in == null) {
                    throw new IllegalStateException("public_suffix_list.dat is missing from the jar");
                }
                text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            Matcher m = SUFFIX.matcher(text);
            while (m.find()) {
                add(m.group());
            }
        }

        static void add(String suffix) {
            String[] labels = suffix.split("\\.", -1);
            Node node = ROOT;
            for (int i = labels.length - 1; i >= 0; i--) {
                node = node.matches.computeIfAbsent(labels[i], k -> new Node());
                String bare = labels[i].startsWith("!") ? labels[i].substring(1) : labels[i];
                if (!isAscii(bare)) {
                    ULABEL.put("xn--" + Punycode.encode(bare), bare);
                }
            }
            node.end = true;
        }
    }

    /** The registered domain of {@code host}, or {@code host} itself when it has none. */
    public static String siteOfHost(String host) {
        String netloc = lenientNetloc(host).replace('\u3002', '.').replace('\uff0e', '.').replace('\uff61', '.');
        String[] labels = netloc.split("\\.", -1);
        int i = suffixIndex(labels);
        if (i < 0) {
            return host; // no suffix: an IP, a single label, an unknown TLD, "[v6]"
        }
        String domain = i > 0 ? labels[i - 1] : "";
        String suffix = String.join(".", Arrays.asList(labels).subList(i, labels.length));
        return domain.isEmpty() || suffix.isEmpty() ? host : domain + "." + suffix;
    }

    /** The index of the first label of the public suffix, or -1 (tldextract's suffix_index). */
    private static int suffixIndex(String[] labels) {
        Node node = Psl.ROOT;
        int suffixIdx = labels.length;
        int labelIdx = labels.length;
        for (int k = labels.length - 1; k >= 0; k--) {
            String decoded = decode(labels[k]);
            Node next = node.matches.get(decoded);
            if (next != null) {
                labelIdx--;
                node = next;
                if (node.end) {
                    suffixIdx = labelIdx;
                }
                continue;
            }
            if (node.matches.containsKey("*")) {
                return node.matches.containsKey("!" + decoded) ? labelIdx : labelIdx - 1;
            }
            break;
        }
        return suffixIdx == labels.length ? -1 : suffixIdx;
    }

    /** tldextract's _decode_punycode, as far as the list can see: the lower-cased label, or
     * the list's U-label of which it is the A-label. */
    private static String decode(String label) {
        String lowered = Urls.lower(label);
        if (lowered.startsWith("xn--")) {
            String u = Psl.ULABEL.get(lowered);
            if (u != null) {
                return u;
            }
        }
        return lowered;
    }

    /** tldextract's lenient_netloc: the host of a URL-like string, case kept. */
    static String lenientNetloc(String url) {
        String rest = schemeless(url);
        for (char c : new char[] {'/', '?', '#'}) {
            int j = rest.indexOf(c);
            if (j >= 0) {
                rest = rest.substring(0, j);
            }
        }
        String after = rest.substring(rest.lastIndexOf('@') + 1);
        if (!after.isEmpty() && after.charAt(0) == '[') {
            int close = after.indexOf(']');
            if (close >= 0) {
                return after.substring(0, close + 1);
            }
        }
        int colon = after.indexOf(':');
        String hostname = pyStrip(colon >= 0 ? after.substring(0, colon) : after);
        int end = hostname.length();
        while (end > 0 && ".\u3002\uff0e\uff61".indexOf(hostname.charAt(end - 1)) >= 0) {
            end--;
        }
        return hostname.substring(0, end);
    }

    private static String schemeless(String url) {
        int d = url.indexOf("//");
        if (d == 0) {
            return url.substring(2);
        }
        if (d < 2 || url.charAt(d - 1) != ':') {
            return url;
        }
        for (int i = 0; i < d - 1; i++) {
            if (SCHEME_CHARS.indexOf(url.charAt(i)) < 0) {
                return url;
            }
        }
        return url.substring(d + 2);
    }

    /** Python's str.strip(): the characters str.isspace() is true of, at both ends. */
    private static String pyStrip(String s) {
        int start = 0;
        int end = s.length();
        while (start < end && isPySpace(s.charAt(start))) {
            start++;
        }
        while (end > start && isPySpace(s.charAt(end - 1))) {
            end--;
        }
        return s.substring(start, end);
    }

    static boolean isPySpace(char c) {
        return (c >= '\t' && c <= '\r') || (c >= '\u001c' && c <= ' ') || c == '\u0085' || c == '\u00a0'
                || c == '\u1680' || (c >= '\u2000' && c <= '\u200a') || c == '\u2028' || c == '\u2029'
                || c == '\u202f' || c == '\u205f' || c == '\u3000';
    }

    private static boolean isAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) > 127) {
                return false;
            }
        }
        return true;
    }
}
