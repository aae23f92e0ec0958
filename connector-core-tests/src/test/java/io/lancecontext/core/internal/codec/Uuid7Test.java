package io.lancecontext.core.internal.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class Uuid7Test {
  @Test
  void layoutFollowsRfc9562() {
    long before = System.currentTimeMillis();
    UUID u = Uuid7.next();
    long after = System.currentTimeMillis();
    assertEquals(7, u.version());
    assertEquals(2, u.variant(), "variant bits 10");
    long ts = Uuid7.timestampMillis(u);
    assertTrue(ts >= before && ts <= after + 1, "48-bit unix millisecond timestamp");
    assertEquals(ts, Long.parseLong(u.toString().replace("-", "").substring(0, 12), 16));
  }

  @Test
  void strictlyIncreasingAndUniqueUnderBursts() {
    Set<UUID> seen = new HashSet<>();
    String previous = "";
    for (int i = 0; i < 200_000; i++) {
      String s = Uuid7.nextString();
      assertTrue(s.compareTo(previous) > 0, "not increasing at " + i + ": " + previous + " then " + s);
      assertTrue(seen.add(UUID.fromString(s)));
      previous = s;
    }
  }
}
