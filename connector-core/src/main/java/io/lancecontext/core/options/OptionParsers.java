package io.lancecontext.core.options;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parsers for option values: durations ({@code 500ms}, {@code 60s}, {@code 5min}) and sizes ({@code 64MiB}). */
public final class OptionParsers {
  private OptionParsers() {}

  private static final Pattern AMOUNT = Pattern.compile("(\\d+)\\s*([a-zA-Z]*)");

  /** {@code <n>[ms|s|sec|m|min|h|d]}; a bare number is milliseconds. */
  public static Duration duration(String text) {
    Matcher m = AMOUNT.matcher(text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("expected a duration such as 500ms, 60s, 5min, 1h");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2).toLowerCase(Locale.ROOT)) {
      case "", "ms" -> Duration.ofMillis(n);
      case "s", "sec", "secs", "second", "seconds" -> Duration.ofSeconds(n);
      case "m", "min", "mins", "minute", "minutes" -> Duration.ofMinutes(n);
      case "h", "hour", "hours" -> Duration.ofHours(n);
      case "d", "day", "days" -> Duration.ofDays(n);
      default -> throw new IllegalArgumentException("unknown duration unit '" + m.group(2) + "' (use ms, s, min, h, d)");
    };
  }

  /** {@code <n>[b|k|kb|kib|m|mb|mib|g|gb|gib]} (binary multiples); a bare number is bytes. */
  public static long bytes(String text) {
    Matcher m = AMOUNT.matcher(text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("expected a size such as 1048576, 64MiB, 2GiB");
    }
    long n = Long.parseLong(m.group(1));
    long unit = switch (m.group(2).toLowerCase(Locale.ROOT)) {
      case "", "b" -> 1L;
      case "k", "kb", "kib" -> 1L << 10;
      case "m", "mb", "mib" -> 1L << 20;
      case "g", "gb", "gib" -> 1L << 30;
      case "t", "tb", "tib" -> 1L << 40;
      default -> throw new IllegalArgumentException("unknown size unit '" + m.group(2) + "' (use KiB, MiB, GiB)");
    };
    return Math.multiplyExact(n, unit);
  }

  public static int positiveInt(String text) {
    int v = Integer.parseInt(text.trim());
    if (v <= 0) {
      throw new IllegalArgumentException("must be a positive integer");
    }
    return v;
  }

  public static boolean bool(String text) {
    return switch (text.trim().toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException("expected true or false");
    };
  }

  /** A comma-separated list of names, blanks around each trimmed, empty ones dropped ("" is the empty list). */
  public static java.util.List<String> names(String text) {
    java.util.List<String> out = new java.util.ArrayList<>();
    for (String part : text.split(",")) {
      if (!part.isBlank()) {
        out.add(part.trim());
      }
    }
    return java.util.List.copyOf(out);
  }

  public static Duration positiveDuration(String text) {
    Duration d = duration(text);
    if (d.isZero()) {
      throw new IllegalArgumentException("must be greater than zero");
    }
    return d;
  }
}
