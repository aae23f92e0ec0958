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
}
