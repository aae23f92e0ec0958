package io.lancecontext.core.internal.codec;

/** The bucket of a UTF-8 key, for a {@link RowBuffer} that keeps each bucket's rows apart. */
@FunctionalInterface
public interface KeyRouter {
  int bucket(byte[] utf8, int offset, int length);
}
