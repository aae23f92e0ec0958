package io.lancecontext.core.internal.codec;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Whether bytes are valid UTF-8 (keys must be): ASCII, the usual key, is seen without a decoder. */
final class Utf8 {
  private Utf8() {}

  static boolean valid(byte[] bytes, int offset, int length) {
    return valid(null, bytes, offset, length);
  }

  /** With a decoder made by {@link #decoder()}, reused across calls of one thread (null: one is made if needed). */
  static boolean valid(CharsetDecoder decoder, byte[] bytes, int offset, int length) {
    int i = offset;
    int end = offset + length;
    while (i < end && bytes[i] >= 0) {
      i++;
    }
    if (i == end) {
      return true;
    }
    try {
      (decoder == null ? decoder() : decoder.reset()).decode(ByteBuffer.wrap(bytes, offset, length));
      return true;
    } catch (CharacterCodingException e) {
      return false;
    }
  }

  static CharsetDecoder decoder() {
    return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
  }
}
