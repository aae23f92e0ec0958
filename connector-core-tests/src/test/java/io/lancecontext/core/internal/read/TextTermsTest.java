package io.lancecontext.core.internal.read;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The terms of a text, and the matcher that counts a query's terms without building a text's own term map. */
class TextTermsTest {
  @Test
  void termsAreLowerCasedRunsOfLettersAndDigits() {
    assertEquals(Map.of("tool", 2, "error", 1, "x", 1, "ray", 1, "über", 1, "42", 1),
        TextTerms.counts("Tool-ERROR: x-ray, TOOL über 42!"));
    assertEquals(Map.of(), TextTerms.counts(" -- ! "));
    assertEquals(Map.of("short", 1), TextTerms.counts("short " + "a".repeat(TextTerms.LENGTH_LIMIT)), "too long a run");
  }

  @Test
  void theMatcherCountsWhatTheTermsSay() {
    Random random = new Random(3);
    String alphabet = "abcABC xyzXYZ 09 -.,éÉüÜßİıKkΣσς日本\u212A";  // the Kelvin sign lower-cases to an ASCII k
    for (int round = 0; round < 2_000; round++) {
      StringBuilder text = new StringBuilder();
      for (int i = 0; i < random.nextInt(60); i++) {
        text.append(alphabet.charAt(random.nextInt(alphabet.length())));
      }
      List<String> terms = new ArrayList<>(TextTerms.counts(text).keySet());
      for (String more : List.of("k", "nothing")) {
        if (!terms.contains(more)) {
          terms.add(more);  // the terms of a query are distinct
        }
      }
      Map<String, Integer> expected = TextTerms.counts(text);
      int[] want = new int[terms.size()];
      boolean any = false;
      for (int t = 0; t < want.length; t++) {
        want[t] = expected.getOrDefault(terms.get(t), 0);
        any |= want[t] > 0;
      }
      int[] got = new TextTerms.Matcher(terms).counts(text);
      assertArrayEquals(any ? want : null, got, text::toString);
    }
  }
}
