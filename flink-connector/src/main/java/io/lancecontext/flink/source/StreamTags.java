package io.lancecontext.flink.source;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.StoreSnapshot;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.HexFormat;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The tags that keep a continuous source's positions (core's {@code ContextStore.tag}): position {@code g} of the
 * stream {@code id} is tagged {@code stream-<hash of id>-<g>}, so a job restored from a checkpoint however long
 * after it stopped still reads from its positions, and its enumerator drops a position's tag once no checkpoint
 * a restore may use refers to it.
 */
final class StreamTags {
  private final String prefix;

  StreamTags(String streamId) {
    this.prefix = "stream-" + hash(streamId) + "-";
  }

  String name(long generation) {
    return prefix + generation;
  }

  /** Tags the store as it is now as position {@code generation}. */
  StoreSnapshot tagNow(ContextStore store, long generation) {
    String name = name(generation);
    try {
      return store.tag(name);
    } catch (IllegalArgumentException exists) {
      store.dropTag(name);  // left by an attempt that failed before a checkpoint recorded it
      return store.tag(name);
    }
  }

  /** Tags the snapshot {@code tokenOrTag} names as position {@code generation}; returns it with its token. */
  StoreSnapshot tag(ContextStore store, long generation, String tokenOrTag) {
    String name = name(generation);
    try {
      return store.tag(name, tokenOrTag);
    } catch (IllegalArgumentException exists) {
      store.dropTag(name);
      return store.tag(name, tokenOrTag);
    }
  }

  void drop(ContextStore store, Collection<Long> generations) {
    for (long g : generations) {
      store.dropTag(name(g));
    }
  }

  /** Drops this stream's tags of positions other than {@code kept} (tagged by an attempt no checkpoint recorded). */
  void dropAllBut(ContextStore store, Set<Long> kept) {
    Set<String> names = kept.stream().map(this::name).collect(Collectors.toSet());
    for (StoreSnapshot t : store.tags()) {
      if (t.tag().startsWith(prefix) && !names.contains(t.tag())) {
        store.dropTag(t.tag());
      }
    }
  }

  /** 16 hex digits of the SHA-256 of {@code text}. */
  static String hash(String text) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
