package io.lancecontext.core.internal.read;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
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

  /** Where a term is in a text: {@code [start, end)}, and whether all of it is ASCII. */
  @FunctionalInterface
  private interface Run {
    void at(int start, int end, boolean ascii);
  }

  /** Calls {@code run} for each term of {@code text}, in order. */
  private static void forEachTerm(CharSequence text, Run run) {
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
      if (bytes < LENGTH_LIMIT) {
        run.at(start, i, ascii);
      }
    }
  }

  private static String lowerCase(CharSequence text, int start, int end) {
    return text.subSequence(start, end).toString().toLowerCase(Locale.ROOT);
  }

  /** Each term of {@code text} with the number of times it occurs, in order of first occurrence. */
  public static Map<String, Integer> counts(CharSequence text) {
    Map<String, Integer> out = new LinkedHashMap<>();
    forEachTerm(text, (start, end, ascii) -> out.merge(lowerCase(text, start, end), 1, Integer::sum));
    return out;
  }

  /** Counts the occurrences of a few terms in texts, without building the texts' own term maps. */
  public static final class Matcher {
    private final Map<String, Integer> index = new HashMap<>();
    private final String[] terms;

    /** A matcher of {@code terms}: distinct, as {@link #counts} returns them (lower-cased). */
    public Matcher(List<String> terms) {
      this.terms = terms.toArray(String[]::new);
      for (int i = 0; i < this.terms.length; i++) {
        index.put(this.terms[i], i);
      }
    }

    /** How often {@code text} holds each term, in the order given; null if it holds none. */
    public int[] counts(CharSequence text) {
      int[][] counts = {null};
      forEachTerm(text, (start, end, ascii) -> {
        int term = ascii ? asciiTerm(text, start, end) : index.getOrDefault(lowerCase(text, start, end), -1);
        if (term >= 0) {
          if (counts[0] == null) {
            counts[0] = new int[terms.length];
          }
          counts[0][term]++;
        }
      });
      return counts[0];
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
