package org.dustonline.rules;

/**
 * RFC 3492 Punycode encoding, a port of Python's {@code encodings.punycode.punycode_encode}
 * (code points, not UTF-16 units): what {@link Sites} needs to know the A-labels of the
 * public suffix list's Unicode labels. Only list labels are encoded, so no overflow checks.
 */
final class Punycode {
    private static final String DIGITS = "abcdefghijklmnopqrstuvwxyz0123456789";

    private Punycode() {}

    /** The Punycode of {@code text} without the "xn--" prefix. */
    static String encode(String text) {
        int[] cps = text.codePoints().toArray();
        StringBuilder base = new StringBuilder();
        java.util.TreeSet<Integer> extended = new java.util.TreeSet<>();
        for (int c : cps) {
            if (c < 0x80) {
                base.append((char) c);
            } else {
                extended.add(c);
            }
        }
        StringBuilder out = new StringBuilder();
        long bias = 72;
        int points = 0;
        int oldchar = 0x80;
        long oldindex = -1;
        for (int c : extended) {
            long curlen = 0;
            for (int x : cps) {
                if (x < c) {
                    curlen++;
                }
            }
            long delta = (curlen + 1) * (c - oldchar);
            long index = -1;
            for (int x : cps) { // selective_find: positions of c among the code points up to c
                if (x < c) {
                    index++;
                } else if (x == c) {
                    index++;
                    delta += index - oldindex;
                    integer(delta - 1, bias, out);
                    bias = adapt(delta - 1, points == 0, base.length() + points + 1);
                    points++;
                    oldindex = index;
                    delta = 0;
                }
            }
            oldchar = c;
        }
        return base.length() == 0 ? out.toString() : base + "-" + out;
    }

    private static long threshold(long j, long bias) {
        long res = 36 * (j + 1) - bias;
        return Math.max(1, Math.min(26, res));
    }

    private static void integer(long n, long bias, StringBuilder out) {
        for (long j = 0;; j++) {
            long t = threshold(j, bias);
            if (n < t) {
                out.append(DIGITS.charAt((int) n));
                return;
            }
            out.append(DIGITS.charAt((int) (t + (n - t) % (36 - t))));
            n = (n - t) / (36 - t);
        }
    }

    private static long adapt(long delta, boolean first, long numchars) {
        delta = first ? delta / 700 : delta / 2;
        delta += delta / numchars;
        long divisions = 0;
        while (delta > 455) {
            delta = delta / 35;
            divisions += 36;
        }
        return divisions + (36 * delta / (delta + 38));
    }
}
