package io.lancecontext.core.internal.lance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.internal.read.PredicateEvaluator;
import io.lancecontext.core.read.Predicate;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Filter text never carries what JNI's modified UTF-8 breaks (NUL, characters outside the Basic Multilingual
 * Plane), and the superset sent instead of an equality on such a string still holds that string.
 */
class LanceSqlTest {
  private static final Pattern RANGE = Pattern.compile("`id` (>=|>) '((?:[^']|'')*)'(?: AND `id` < '((?:[^']|'')*)')?");

  /** A merge tells passable keys from their UTF-8 bytes, as {@code passable} does from the string. */
  @Test
  void passableFromUtf8BytesAgreesWithPassableFromTheString() {
    Random random = new Random(11);
    for (int i = 0; i < 5_000; i++) {
      String key = randomString(random);
      assertEquals(LanceSql.passable(key), LanceSql.passableUtf8(key.getBytes(java.nio.charset.StandardCharsets.UTF_8)),
          escape(key));
    }
    assertTrue(LanceSql.passableUtf8("ключ-é-日本".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    assertTrue(!LanceSql.passableUtf8("k-🙂".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
  }

  @Test
  void filterTextNeverHoldsNulOrSupplementaryCharactersAndItsRangesHoldTheKey() {
    Random random = new Random(7);
    for (int i = 0; i < 5_000; i++) {
      String key = randomString(random);
      LanceSql.Rendered eq = LanceSql.renderSuperset(Predicate.eq("id", key));
      assertTrue(LanceSql.passable(eq.sql()), "sent text for " + escape(key) + ": " + escape(eq.sql()));
      assertEquals(LanceSql.passable(key), eq.exact(), escape(key));
      if (!eq.exact() && !eq.sql().equals("true")) {
        assertTrue(rangeHolds(eq.sql(), key), "range " + escape(eq.sql()) + " misses " + escape(key));
      }
      Predicate in = Predicate.and(Predicate.in("id", List.of(key, "plain")), Predicate.not(Predicate.in("s", List.of(key))));
      LanceSql.Rendered r = LanceSql.renderSuperset(in);
      assertTrue(LanceSql.passable(r.sql()), escape(r.sql()));
    }
  }

  @Test
  void aNegationOfAnInexactFilterIsNotSent() {
    LanceSql.Rendered r = LanceSql.renderSuperset(Predicate.not(Predicate.eq("id", "a\u0000b")));
    assertEquals(new LanceSql.Rendered("true", false), r);
    LanceSql.Rendered and = LanceSql.renderSuperset(Predicate.and(Predicate.eq("n", 1L), Predicate.eq("id", "x\uD83D\uDE00")));
    assertFalse(and.exact());
    assertTrue(and.sql().contains("`n` = 1"), and.sql());
  }

  /** Whether {@code key} lies in the range that {@code sql} (a range the renderer produced) describes. */
  private static boolean rangeHolds(String sql, String key) {
    Matcher m = RANGE.matcher(sql);
    assertTrue(m.matches(), "not a key range: " + escape(sql));
    String lower = m.group(2).replace("''", "'");
    int c = PredicateEvaluator.compareCodePoints(key, lower);
    boolean aboveLower = m.group(1).equals(">=") ? c >= 0 : c > 0;
    boolean belowUpper = m.group(3) == null || PredicateEvaluator.compareCodePoints(key, m.group(3).replace("''", "'")) < 0;
    return aboveLower && belowUpper;
  }

  private static String randomString(Random random) {
    StringBuilder sb = new StringBuilder();
    int n = random.nextInt(6);
    for (int i = 0; i < n; i++) {
      switch (random.nextInt(8)) {
        case 0 -> sb.append('\u0000');
        case 1 -> sb.appendCodePoint(0x10000 + random.nextInt(0x100000));
        case 2 -> sb.append('\uFFFF');
        case 3 -> sb.append('\'');
        case 4 -> sb.append((char) (0xD7F0 + random.nextInt(16)));
        case 5 -> sb.append((char) (0xE000 + random.nextInt(16)));
        default -> sb.append((char) ('a' + random.nextInt(26)));
      }
    }
    return sb.toString();
  }

  private static String escape(String s) {
    StringBuilder sb = new StringBuilder();
    s.codePoints().forEach(cp -> sb.append(cp < 0x20 || cp > 0x7E ? String.format("\\u{%X}", cp) : Character.toString(cp)));
    return sb.toString();
  }
}
