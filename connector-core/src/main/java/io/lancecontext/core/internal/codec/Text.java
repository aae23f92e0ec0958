package io.lancecontext.core.internal.codec;

/** Whether a Java string is Unicode text that UTF-8 can hold (Arrow strings, Lance, filter literals). */
public final class Text {
  private Text() {}

  /** Index of the first surrogate that is not half of a pair, or -1 if {@code s} is well-formed UTF-16. */
  public static int unpairedSurrogate(String s) {
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (Character.isHighSurrogate(ch) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(ch)) {
        return i;
      }
    }
    return -1;
  }

  /** Whether {@code s} has no unpaired surrogate, so UTF-8 can hold it. */
  public static boolean isText(String s) {
    return unpairedSurrogate(s) < 0;
  }
}
