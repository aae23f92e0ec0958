package io.lancecontext.core.internal.lance;

import java.util.Objects;
import org.lance.Session;

/**
 * A Lance session: the index and metadata caches datasets opened with it share ({@link LanceDataset#open}).
 * Which session a dataset gets is decided outside this package ({@code LanceRuntime}).
 */
public final class LanceSession {
  private final Session session;

  private LanceSession(Session session) {
    this.session = Objects.requireNonNull(session);
  }

  /** A new session whose caches hold at most these many bytes; never closed (it lives as long as the JVM). */
  public static LanceSession create(long indexCacheBytes, long metadataCacheBytes) {
    return new LanceSession(Session.builder().indexCacheSizeBytes(indexCacheBytes)
        .metadataCacheSizeBytes(metadataCacheBytes).build());
  }

  /**
   * A handle on a session built with lance-core directly (benchmarks); its builder keeps owning it. Main code
   * outside this package never calls it (ArchitectureTest).
   */
  public static LanceSession wrap(Session session) {
    return new LanceSession(session);
  }

  /**
   * The lance-core session, for this package, tests and benchmarks; main code outside this package never
   * calls it (ArchitectureTest).
   */
  public Session lance() {
    return session;
  }

  /**
   * Bytes held by the session's caches, measured now: lance-core sums every cache entry to answer, so the
   * cost grows with the cache.
   */
  public long sizeBytes() {
    return session.sizeBytes();
  }
}
