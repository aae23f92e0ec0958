package io.lancecontext.core.internal.read;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The terms of a text, as full-text search sees them: maximal runs of letters and digits, lower-cased, shorter than
 * {@value #LENGTH_LIMIT} bytes in UTF-8 (longer runs are no terms). The same rule as the inverted index's tokenizer
 * ({@link io.lancecontext.core.internal.lance.TextIndex}), so the index finds exactly the rows whose terms match.
 */
public final class TextTerms {
  /** Runs of letters and digits of this many UTF-8 bytes or more are no terms. */
  public static final int LENGTH_LIMIT = 256;

  private TextTerms() {}

  /** Each term of {@code text} with the number of times it occurs, in order of first occurrence. */
  public static Map<String, Integer> counts(CharSequence text) {
    Map<String, Integer> out = new LinkedHashMap<>();
    int n = text.length();
    int i = 0;
    while (i < n) {
      int c = Character.codePointAt(text, i);
      if (!Character.isLetterOrDigit(c)) {
        i += Character.charCount(c);
        continue;
      }
      int start = i;
      int bytes = 0;
      while (i < n) {
        c = Character.codePointAt(text, i);
        if (!Character.isLetterOrDigit(c)) {
          break;
        }
        i += Character.charCount(c);
        bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
      }
      if (bytes < LENGTH_LIMIT) {
        out.merge(text.subSequence(start, i).toString().toLowerCase(Locale.ROOT), 1, Integer::sum);
      }
    }
    return out;
  }

  /** Counts the occurrences of a few terms in texts, without building the texts' own term maps. */
  public static final class Matcher {
    private final Map<String, Integer> index = new java.util.HashMap<>();
    private final String[] terms;

    /** A matcher of {@code terms} (terms as {@link #counts} returns them: lower-cased). */
    public Matcher(java.util.List<String> terms) {
      this.terms = terms.toArray(String[]::new);
      for (int i = 0; i < this.terms.length; i++) {
        index.put(this.terms[i], i);
      }
    }

    /** How often {@code text} holds each term, in the order given; null if it holds none. */
    public int[] counts(CharSequence text) {
      int[] counts = null;
      int n = text.length();
      int i = 0;
      while (i < n) {
        int c = Character.codePointAt(text, i);
        if (!Character.isLetterOrDigit(c)) {
          i += Character.charCount(c);
          continue;
        }
        int start = i;
        int bytes = 0;
        boolean ascii = true;
        while (i < n) {
          c = Character.codePointAt(text, i);
          if (!Character.isLetterOrDigit(c)) {
            break;
          }
          i += Character.charCount(c);
          bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
          ascii &= c < 0x80;
        }
        if (bytes >= LENGTH_LIMIT) {
          continue;
        }
        int term = ascii ? asciiTerm(text, start, i)
            : index.getOrDefault(text.subSequence(start, i).toString().toLowerCase(Locale.ROOT), -1);
        if (term >= 0) {
          if (counts == null) {
            counts = new int[terms.length];
          }
          counts[term]++;
        }
      }
      return counts;
    }

    /** The term an ASCII run equals ignoring case, or -1. */
    private int asciiTerm(CharSequence text, int start, int end) {
      int length = end - start;
      for (int t = 0; t < terms.length; t++) {
        String term = terms[t];
        if (term.length() != length) {
          continue;
        }
        int k = 0;
        while (k < length) {
          char a = text.charAt(start + k);
          if (a >= 'A' && a <= 'Z') {
            a = (char) (a + ('a' - 'A'));
          }
          if (a != term.charAt(k)) {
            break;
          }
          k++;
        }
        if (k == length) {
          return t;
        }
      }
      return -1;
    }
  }
}
