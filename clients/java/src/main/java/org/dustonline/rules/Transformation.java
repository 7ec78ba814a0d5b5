package org.dustonline.rules;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;

/**
 * A parsed transformation (docs/formats.md, "Value conversions"): literals, {@code $N},
 * {@code $$} (a literal $) and {@code ${N:lower}} / {@code ${N:upper}}, applied by hand:
 * {@link Matcher#appendReplacement} would throw on {@code $$} and on {@code ${N:lower}}.
 * The port of {@code parse_transformation} in dustonline/rules/ruleset.py: {@code $N}
 * takes the longest run of digits that is a group number; case conversion is ASCII only.
 */
final class Transformation {
    private static final int LITERAL = 0;
    private static final int GROUP = 1;
    private static final int LOWER = 2;
    private static final int UPPER = 3;

    private final int[] kinds;
    private final int[] groups;
    private final String[] literals;

    private Transformation(List<Integer> kinds, List<Integer> groups, List<String> literals) {
        this.kinds = kinds.stream().mapToInt(Integer::intValue).toArray();
        this.groups = groups.stream().mapToInt(Integer::intValue).toArray();
        this.literals = literals.toArray(new String[0]);
    }

    /** IllegalArgumentException (the message says why) for what Python refuses. */
    static Transformation parse(String t, int ngroups) {
        List<Integer> kinds = new ArrayList<>();
        List<Integer> groups = new ArrayList<>();
        List<String> literals = new ArrayList<>();
        StringBuilder lit = new StringBuilder();
        int i = 0;
        int n = t.length();
        while (i < n) {
            char ch = t.charAt(i);
            if (ch != '$') {
                lit.append(ch);
                i++;
                continue;
            }
            if (i + 1 < n && t.charAt(i + 1) == '$') {
                lit.append('$');
                i += 2;
                continue;
            }
            int j = i + 1;
            if (j < n && t.charAt(j) == '{') {
                int end = t.indexOf('}', j);
                if (end < 0) {
                    throw new IllegalArgumentException("'${' at " + i + " is not closed by '}'");
                }
                String body = t.substring(j + 1, end);
                int colon = body.indexOf(':');
                String num = colon < 0 ? body : body.substring(0, colon);
                if (colon < 0 || !asciiDigits(num)) {
                    throw new IllegalArgumentException("'${" + body + "}' at " + i + " is not ${N:conversion}");
                }
                String conv = body.substring(colon + 1);
                int kind;
                if (conv.equals("lower")) {
                    kind = LOWER;
                } else if (conv.equals("upper")) {
                    kind = UPPER;
                } else {
                    throw new IllegalArgumentException("'${" + body + "}' at " + i + ": unknown conversion '" + conv
                            + "', choose from lower, upper");
                }
                int g = groupNumber(num, ngroups);
                flush(lit, kinds, groups, literals);
                kinds.add(kind);
                groups.add(g);
                literals.add(null);
                i = end + 1;
                continue;
            }
            // $N: ASCII digits only, as Python's parse_transformation reads them
            if (j >= n || !isAsciiDigit(t.codePointAt(j))) {
                throw new IllegalArgumentException("'$' at " + i + " is neither $$, a group reference nor ${N:conversion}");
            }
            long g = decimal(t.codePointAt(j));
            j += Character.charCount(t.codePointAt(j));
            while (j < n && isAsciiDigit(t.codePointAt(j))) {
                long next = g * 10 + decimal(t.codePointAt(j));
                if (next > ngroups) {
                    break;
                }
                g = next;
                j += Character.charCount(t.codePointAt(j));
            }
            if (g < 1 || g > ngroups) {
                throw new IllegalArgumentException("transformation refers to $" + g + ", context has " + ngroups + " groups");
            }
            flush(lit, kinds, groups, literals);
            kinds.add(GROUP);
            groups.add((int) g);
            literals.add(null);
            i = j;
        }
        flush(lit, kinds, groups, literals);
        return new Transformation(kinds, groups, literals);
    }

    private static void flush(StringBuilder lit, List<Integer> kinds, List<Integer> groups, List<String> literals) {
        if (lit.length() > 0) {
            kinds.add(LITERAL);
            groups.add(0);
            literals.add(lit.toString());
            lit.setLength(0);
        }
    }

    private static boolean asciiDigits(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    private static int groupNumber(String num, int ngroups) {
        // all digits up to the colon; a number too long for an int is beyond any group
        String digits = num.replaceFirst("^0+(?=.)", "");
        if (digits.length() > 9 || Integer.parseInt(digits) < 1 || Integer.parseInt(digits) > ngroups) {
            throw new IllegalArgumentException("transformation refers to $" + digits + ", context has " + ngroups
                    + " groups");
        }
        return Integer.parseInt(digits);
    }

    /** Python's int() of one code point: decimal digits only (Numeric_Type Decimal). */
    private static boolean isAsciiDigit(int cp) {
        return cp >= '0' && cp <= '9';
    }

    private static long decimal(int cp) {
        if (Character.getType(cp) != Character.DECIMAL_DIGIT_NUMBER) {
            throw new IllegalArgumentException("invalid literal for int() with base 10: '"
                    + new String(Character.toChars(cp)) + "'");
        }
        return Character.digit(cp, 10);
    }

    /** The output for a full match; a group that did not take part gives "". */
    String apply(Matcher m) {
        StringBuilder out = new StringBuilder();
        for (int k = 0; k < kinds.length; k++) {
            if (kinds[k] == LITERAL) {
                out.append(literals[k]);
                continue;
            }
            String v = m.group(groups[k]);
            if (v == null) {
                continue;
            }
            if (kinds[k] == GROUP) {
                out.append(v);
            } else {
                appendCase(out, v, kinds[k] == LOWER);
            }
        }
        return out.toString();
    }

    /** ASCII-only case mapping: A-Z to a-z (or back), every other char unchanged. */
    private static void appendCase(StringBuilder out, String v, boolean lower) {
        for (int k = 0; k < v.length(); k++) {
            char c = v.charAt(k);
            if (lower && c >= 'A' && c <= 'Z') {
                c = (char) (c + 32);
            } else if (!lower && c >= 'a' && c <= 'z') {
                c = (char) (c - 32);
            }
            out.append(c);
        }
    }
}
