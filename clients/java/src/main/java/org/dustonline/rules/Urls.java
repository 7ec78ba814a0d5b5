package org.dustonline.rules;

import java.util.Locale;

/**
 * Hosts and the light normalization, as dustonline/rules/urls.py computes them (string
 * operations, no URL parser): the port of {@code split_authority}, {@code host_of} and
 * {@code light_normalize}. Case mapping of hosts and schemes is Unicode lower case, as
 * Python's {@code str.lower()} (both follow SpecialCasing: U+0130 gives "i\u0307").
 */
public final class Urls {
    private static final String UNRESERVED =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private Urls() {}

    /** (scheme, authority, rest) without validation; rest starts with / ? # or is empty. */
    static String[] splitAuthority(String url) {
        int i = url.indexOf("://");
        if (i < 0) {
            return new String[] {"", "", url};
        }
        int start = i + 3;
        int end = url.length();
        for (char ch : new char[] {'/', '?', '#'}) {
            int j = url.indexOf(ch, start);
            if (j >= 0 && j < end) {
                end = j;
            }
        }
        return new String[] {url.substring(0, i), url.substring(start, end), url.substring(end)};
    }

    static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }

    static String rstripDots(String s) {
        int end = s.length();
        while (end > 0 && s.charAt(end - 1) == '.') {
            end--;
        }
        return s.substring(0, end);
    }

    /** Lower-case host without userinfo or port: the key rules are indexed by. */
    public static String hostOf(String url) {
        String auth = splitAuthority(url)[1];
        int at = auth.lastIndexOf('@');
        if (at >= 0) {
            auth = auth.substring(at + 1);
        }
        if (auth.startsWith("[")) {
            int end = auth.indexOf(']');
            return end > 0 ? lower(auth.substring(0, end + 1)) : lower(auth);
        }
        int colon = auth.indexOf(':');
        if (colon >= 0) {
            auth = auth.substring(0, colon);
        }
        return rstripDots(lower(auth));
    }

    /** Python's {@code str.isdigit()}: non-empty, every code point a digit (Numeric_Type
     * Decimal or Digit: "١", superscript "²" and circled "①" count, "⑩" does not). */
    static boolean isDigits(String s) {
        if (s.isEmpty()) {
            return false;
        }
        return s.codePoints().allMatch(Urls::isDigit);
    }

    static boolean isDigit(int cp) {
        int t = Character.getType(cp);
        if (t == Character.DECIMAL_DIGIT_NUMBER) {
            return true;
        }
        int v = Character.getNumericValue(cp);
        return t == Character.OTHER_NUMBER && v >= 0 && v <= 9;
    }

    private static String defaultPort(String scheme) {
        switch (scheme) {
            case "http":
                return "80";
            case "https":
                return "443";
            default:
                return null;
        }
    }

    static String hostport(String hostport, String scheme) {
        hostport = lower(hostport);
        String host;
        String port;
        if (hostport.startsWith("[")) {
            int end = hostport.indexOf(']');
            String rest;
            if (end > 0) {
                host = hostport.substring(0, end + 1);
                rest = hostport.substring(end + 1);
            } else {
                host = hostport;
                rest = "";
            }
            port = rest.startsWith(":") ? rest.substring(1) : null;
            if (!rest.isEmpty() && port == null) {
                return hostport;
            }
        } else {
            int sep = hostport.lastIndexOf(':');
            if (sep < 0) {
                host = hostport;
                port = null;
            } else {
                host = hostport.substring(0, sep);
                port = hostport.substring(sep + 1);
                if (host.indexOf(':') >= 0 || !(port.isEmpty() || isDigits(port))) {
                    return hostport; // not host:port; leave it as it is
                }
            }
            String stripped = rstripDots(host);
            host = stripped.isEmpty() ? host : stripped;
        }
        if (port == null || port.isEmpty() || port.equals(defaultPort(scheme))) {
            return host;
        }
        return host + ":" + port;
    }

    private static int hexValue(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    /** Escapes upper-cased, unreserved ones decoded, a bare % encoded as %25. */
    static String fixPercent(String rest) {
        StringBuilder out = new StringBuilder(rest.length() + 8);
        int n = rest.length();
        for (int i = 0; i < n; i++) {
            char c = rest.charAt(i);
            if (c != '%') {
                out.append(c);
                continue;
            }
            int hi = i + 1 < n ? hexValue(rest.charAt(i + 1)) : -1;
            int lo = i + 2 < n ? hexValue(rest.charAt(i + 2)) : -1;
            if (hi < 0 || lo < 0) {
                out.append("%25"); // so that decoding never forms a new escape
                continue;
            }
            char ch = (char) (hi * 16 + lo);
            if (UNRESERVED.indexOf(ch) >= 0) {
                out.append(ch);
            } else {
                out.append('%').append(HEX[hi]).append(HEX[lo]);
            }
            i += 2;
        }
        return out.toString();
    }

    /**
     * RFC 3986 syntax-based normalization: scheme and host case, default port, empty path,
     * percent-encoding case and unreserved characters, fragment removed. Idempotent.
     */
    public static String lightNormalize(String url) {
        String[] parts = splitAuthority(url);
        String scheme = parts[0];
        if (scheme.isEmpty()) {
            return url;
        }
        scheme = lower(scheme);
        String auth = parts[1];
        String rest = parts[2];
        int at = auth.lastIndexOf('@');
        String userinfo = at >= 0 ? auth.substring(0, at + 1) : "";
        String hp = hostport(at >= 0 ? auth.substring(at + 1) : auth, scheme);
        int h = rest.indexOf('#');
        if (h >= 0) {
            rest = rest.substring(0, h);
        }
        if (rest.isEmpty() || rest.charAt(0) == '?') {
            rest = "/" + rest;
        }
        if (rest.indexOf('%') >= 0) {
            rest = fixPercent(rest);
        }
        return scheme + "://" + userinfo + hp + rest;
    }
}
