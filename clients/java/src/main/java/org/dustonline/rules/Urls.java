package org.dustonline.rules;

import java.net.IDN;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Hosts and the light normalization, as dustonline/rules/urls.py computes them (string
 * operations, no URL parser): the port of {@code split_authority}, {@code host_of} and
 * {@code light_normalize}. Case mapping of hosts and schemes is Unicode lower case, as
 * Python's {@code str.lower()} (both follow SpecialCasing: U+0130 gives "i\u0307"). An IDN
 * host is written as its A-labels by {@link #aLabel}.
 */
public final class Urls {
    private static final String UNRESERVED =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();
    /** What an A-label host may hold (Heritrix's ACCEPTABLE_ASCII_DOMAIN), as urls.py. */
    private static final Pattern HOST_NAME = Pattern.compile("[a-z0-9_.-]+");

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

    /**
     * Python's {@code str.lower()}: {@code toLowerCase(Locale.ROOT)}, whose one contextual
     * mapping, capital sigma, is decided as Python decides it (Java looks for word
     * boundaries, Python for case-ignorable and cased letters around it).
     */
    static String lower(String s) {
        String low = s.toLowerCase(Locale.ROOT);
        if (s.indexOf('\u03a3') < 0) {
            return low;
        }
        StringBuilder out = new StringBuilder(low.length());
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            if (cp == 0x3a3) {
                out.append(finalSigma(s, i) ? '\u03c2' : '\u03c3');
            } else {
                out.append(new String(Character.toChars(cp)).toLowerCase(Locale.ROOT));
            }
            i += Character.charCount(cp);
        }
        return out.toString();
    }

    /** CPython's handle_capital_sigma: a cased letter before it (case-ignorables skipped)
     * and none after it. */
    private static boolean finalSigma(String s, int i) {
        int c = 0;
        int j = i;
        boolean before = false;
        while (j > 0) {
            c = s.codePointBefore(j);
            j -= Character.charCount(c);
            if (!caseIgnorable(c)) {
                before = true;
                break;
            }
        }
        if (!before || !cased(c)) {
            return false;
        }
        int k = i + 1;
        while (k < s.length()) {
            c = s.codePointAt(k);
            if (!caseIgnorable(c)) {
                return !cased(c);
            }
            k += Character.charCount(c);
        }
        return true;
    }

    /** Unicode's Cased: Lowercase, Uppercase (both with their Other_ parts) or Lt. */
    private static boolean cased(int c) {
        return Character.isLowerCase(c) || Character.isUpperCase(c) || Character.isTitleCase(c);
    }

    /** Unicode's Case_Ignorable: Word_Break MidLetter, MidNumLet or Single_Quote, or a
     * general category Mn, Me, Cf, Lm, Sk. */
    private static boolean caseIgnorable(int c) {
        switch (Character.getType(c)) {
            case Character.NON_SPACING_MARK:
            case Character.ENCLOSING_MARK:
            case Character.FORMAT:
            case Character.MODIFIER_LETTER:
            case Character.MODIFIER_SYMBOL:
                return true;
            default:
                return WORD_BREAK_MID.indexOf(c) >= 0;
        }
    }

    private static final String WORD_BREAK_MID = "'.:\u00b7\u0387\u055f\u05f4\u2018\u2019\u2024\u2027"
            + "\ufe13\ufe52\ufe55\uff07\uff0e\uff1a";

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
        return aLabel(rstripDots(lower(auth)));
    }

    /**
     * An internationalized host (lower case already) as its A-labels, {@code bücher.example}
     * to {@code xn--bcher-kva.example}; ASCII hosts as they are. IDNA 2003 ToASCII with
     * AllowUnassigned false ({@code IDN.toASCII(host, 0)}), which Python computes as its
     * {@code idna} codec after refusing code points Unicode 3.2 did not assign. A host that
     * does not encode, or whose result is empty (after its trailing dots) or not letters,
     * digits, '-', '_' and '.', stays as given. Unpaired surrogates are refused here:
     * nameprep prohibits them (RFC 3454 C.5) and Python refuses them, java.net.IDN passes
     * some.
     */
    public static String aLabel(String host) {
        if (isAscii(host)) {
            return host;
        }
        for (int i = 0; i < host.length(); i++) {
            char c = host.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < host.length() && Character.isLowSurrogate(host.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return host;
            }
        }
        String out;
        try {
            out = rstripDots(IDN.toASCII(host, 0));
        } catch (RuntimeException e) { // IllegalArgumentException: does not encode
            return host;
        }
        return HOST_NAME.matcher(out).matches() ? out : host;
    }

    static boolean isAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return false;
            }
        }
        return true;
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
            host = aLabel(stripped.isEmpty() ? host : stripped);
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
     * RFC 3986 syntax-based normalization: scheme and host case, IDN hosts as A-labels,
     * default port, empty path, percent-encoding case and unreserved characters, fragment
     * removed (docs/formats.md, Light normalization). Idempotent.
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
